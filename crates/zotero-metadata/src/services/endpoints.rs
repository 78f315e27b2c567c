//! One call per service and record: the path each service is asked, its identifiers encoded
//! so that they cannot leave the base.

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::{MetadataServices, Service, ServiceError, MAX_UPSTREAM_TEXT};

/// The most DOIs one [`MetadataServices::crossref_updates`] request names: a URL of some
/// 3,000 characters, well within what Crossref's servers take, and an answer of a few tens
/// of kilobytes (only the update relations are selected).
pub const CROSSREF_DOIS_PER_REQUEST: usize = 50;

impl MetadataServices {
    /// The CSL-JSON of a DOI by content negotiation at doi.org (which redirects to the
    /// agency that registered it); `None` when no agency knows it.
    pub async fn doi_csl(
        &self,
        doi: &str,
        cancel: &CancellationToken,
    ) -> Result<Option<Value>, ServiceError> {
        self.json(
            Service::Doi,
            &format!("/{}", encode_path(doi)?),
            "application/vnd.citationstyles.csl+json",
            cancel,
        )
        .await
    }

    /// Crossref's record of a DOI (`message`), in the polite pool when a contact is set.
    pub async fn crossref_work(
        &self,
        doi: &str,
        cancel: &CancellationToken,
    ) -> Result<Option<Value>, ServiceError> {
        let mut path = format!("/works/{}", encode_path(doi)?);
        if let Some(mail) = &self.config.contact_email {
            path.push_str(&format!("?mailto={}", encode_query(mail)));
        }
        let answer = self
            .json(Service::Crossref, &path, "application/json", cancel)
            .await?;
        Ok(answer.and_then(|v| v.get("message").cloned()))
    }

    /// Crossref's works of these DOIs with only their update relations (`DOI`,
    /// `updated-by`: the notices that update it, `update-to`: what a notice updates), in
    /// one request for all: `filter=doi:a,doi:b` (Crossref ORs the values of one filter),
    /// at most [`CROSSREF_DOIS_PER_REQUEST`]. DOIs Crossref does not know are absent. A DOI
    /// holding a comma cannot be a filter value: [`MetadataServices::crossref_work`] reads it.
    pub async fn crossref_updates(
        &self,
        dois: &[String],
        cancel: &CancellationToken,
    ) -> Result<Vec<Value>, ServiceError> {
        if let Some(d) = dois.iter().find(|d| d.contains(',')) {
            return Err(ServiceError::BadIdentifier(format!(
                "'{}' holds a comma, which a Crossref filter cannot carry; ask for it alone",
                d.chars().take(MAX_UPSTREAM_TEXT).collect::<String>()
            )));
        }
        if dois.is_empty() {
            return Ok(Vec::new());
        }
        let filter: Vec<String> = dois
            .iter()
            .take(CROSSREF_DOIS_PER_REQUEST)
            .map(|d| format!("doi:{}", encode_query(d)))
            .collect();
        let mut path = format!(
            "/works?filter={}&rows={}&select=DOI,updated-by,update-to",
            filter.join(","),
            filter.len()
        );
        if let Some(mail) = &self.config.contact_email {
            path.push_str(&format!("&mailto={}", encode_query(mail)));
        }
        let answer = self
            .json(Service::Crossref, &path, "application/json", cancel)
            .await?;
        Ok(answer
            .and_then(|v| v.pointer("/message/items").cloned())
            .and_then(|v| match v {
                Value::Array(a) => Some(a),
                _ => None,
            })
            .unwrap_or_default())
    }

    /// DataCite's record of a DOI (`data.attributes`).
    pub async fn datacite(
        &self,
        doi: &str,
        cancel: &CancellationToken,
    ) -> Result<Option<Value>, ServiceError> {
        let path = format!("/dois/{}", encode_path(doi)?);
        let answer = self
            .json(Service::DataCite, &path, "application/vnd.api+json", cancel)
            .await?;
        Ok(answer.and_then(|v| v.pointer("/data/attributes").cloned()))
    }

    /// arXiv's Atom feed for these ids (one request for all, as arXiv asks).
    pub async fn arxiv_feed(
        &self,
        ids: &[String],
        cancel: &CancellationToken,
    ) -> Result<String, ServiceError> {
        let path = format!(
            "/api/query?id_list={}&max_results={}",
            encode_list(ids),
            ids.len()
        );
        let answer = self
            .get(Service::Arxiv, &path, "application/atom+xml", cancel)
            .await?;
        if answer.status != 200 {
            return Err(self.status_error(Service::Arxiv, answer.status, &answer.body));
        }
        String::from_utf8(answer.body.to_vec()).map_err(|e| ServiceError::BadAnswer {
            service: Service::Arxiv.name(),
            reason: self.clean(&e.to_string()),
        })
    }

    /// Open Library's record of an ISBN (`jscmd=data`); `None` when it has none.
    pub async fn openlibrary_isbn(
        &self,
        isbn: &str,
        cancel: &CancellationToken,
    ) -> Result<Option<Value>, ServiceError> {
        let key = format!("ISBN:{isbn}");
        let path = format!(
            "/api/books?bibkeys={}&format=json&jscmd=data",
            encode_query(&key)
        );
        let answer = self
            .json(Service::OpenLibrary, &path, "application/json", cancel)
            .await?;
        Ok(answer.and_then(|v| v.get(&key).cloned()))
    }

    /// NCBI's summaries of these PubMed ids (one request for all): `result`.
    pub async fn pubmed_summaries(
        &self,
        pmids: &[String],
        cancel: &CancellationToken,
    ) -> Result<Value, ServiceError> {
        let path = format!(
            "/entrez/eutils/esummary.fcgi?db=pubmed&retmode=json&id={}{}",
            encode_list(pmids),
            self.ncbi_manners()
        );
        let answer = self
            .json(Service::Ncbi, &path, "application/json", cancel)
            .await?
            .unwrap_or(Value::Null);
        Ok(answer.get("result").cloned().unwrap_or(Value::Null))
    }

    /// The PMC ID converter's records for these PMCIDs: `records`.
    pub async fn pmc_ids(
        &self,
        pmcids: &[String],
        cancel: &CancellationToken,
    ) -> Result<Vec<Value>, ServiceError> {
        // The converter lives on www.ncbi.nlm.nih.gov, not on the E-utilities host; a
        // configured NCBI base serves both.
        let root = match self.config.bases.get(&Service::Ncbi) {
            Some(base) => base.clone(),
            None => "https://www.ncbi.nlm.nih.gov".to_string(),
        };
        let path = format!(
            "{root}/pmc/utils/idconv/v1.0/?format=json&ids={}{}",
            encode_list(pmcids),
            self.ncbi_manners()
        );
        let answer = self
            .json(Service::Ncbi, &path, "application/json", cancel)
            .await?
            .unwrap_or(Value::Null);
        Ok(answer
            .get("records")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default())
    }

    /// `&tool=zotero-mcp&email=…&api_key=…`, as NCBI asks of every caller.
    fn ncbi_manners(&self) -> String {
        let mut q = String::from("&tool=zotero-mcp");
        if let Some(mail) = &self.config.contact_email {
            q.push_str(&format!("&email={}", encode_query(mail)));
        }
        if let Some(key) = &self.config.ncbi_api_key {
            q.push_str(&format!("&api_key={}", encode_query(key.expose())));
        }
        q
    }

    /// Unpaywall's record of a DOI; refused without a contact address (Unpaywall asks for
    /// one with every request).
    pub async fn unpaywall(
        &self,
        doi: &str,
        cancel: &CancellationToken,
    ) -> Result<Option<Value>, ServiceError> {
        let Some(mail) = &self.config.contact_email else {
            return Err(ServiceError::NoContact);
        };
        let path = format!("/v2/{}?email={}", encode_path(doi)?, encode_query(mail));
        self.json(Service::Unpaywall, &path, "application/json", cancel)
            .await
    }
}

/// An identifier as path segments below a service's base: what cannot stand in a segment
/// as it is percent-encoded (`%`, `?`, `#`, `\` included); `/` is kept (a DOI's suffix may
/// hold slashes, and the services read them as part of the DOI). A `.` or `..` segment is
/// refused: a server (or a proxy before it) would resolve it and the request would leave
/// the base (`10.5555/../../x`).
pub fn encode_path(s: &str) -> Result<String, ServiceError> {
    if s.split('/').any(|seg| seg == "." || seg == "..") {
        return Err(ServiceError::BadIdentifier(format!(
            "'{}' has a '.' or '..' path segment, which would leave the service's path; \
             no registered DOI has one: check the identifier",
            s.chars().take(MAX_UPSTREAM_TEXT).collect::<String>()
        )));
    }
    Ok(encode(s, |b| {
        b.is_ascii_alphanumeric() || b"-._~/:;()".contains(&b)
    }))
}

/// Identifiers as one comma-separated query value, each encoded.
pub(super) fn encode_list(ids: &[String]) -> String {
    ids.iter()
        .map(|i| encode_query(i))
        .collect::<Vec<_>>()
        .join(",")
}

/// Percent-encodes a query value.
pub fn encode_query(s: &str) -> String {
    encode(s, |b| b.is_ascii_alphanumeric() || b"-._~:".contains(&b))
}

pub(super) fn encode(s: &str, keep: impl Fn(u8) -> bool) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if keep(b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}
