//! Fake metadata hosts for adding a paper by its identifier: the DOI resolver (doi.org, with
//! content negotiation), Crossref's and DataCite's REST APIs, arXiv's API, Open Library, NCBI
//! E-utilities (esummary and the PMC id converter), Unpaywall, and a host for the open-access
//! PDFs Unpaywall points to; and OpenAlex's works API, for the citation graph. Each is served on the emulator's own address under a path root
//! standing for the public host's root (`{uri}/crossref` is `https://api.crossref.org`), answers
//! with the real services' shapes, errors and rate-limit headers, and is seeded with the small
//! catalogue of `fixtures/metadata/` (see `fixtures/README.md`, which says what is guessed).
//!
//! `doi.rs` plays doi.org, Crossref and DataCite, `arxiv_api.rs` arXiv's API, `others.rs`
//! Open Library, NCBI, Unpaywall and the open-access files, `openalex.rs` OpenAlex, `csl.rs`
//! derives the CSL-JSON the agencies' content negotiation answers, `catalogue.rs` loads the
//! fixtures.

mod arxiv_api;
mod catalogue;
mod csl;
mod doi;
mod openalex;
mod others;

pub use arxiv_api::ArxivPaper;
pub use catalogue::crossref_article;
pub use openalex::openalex_work;

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use serde_json::Value;

use super::{Answer, Emulator, FaultKind, HostedFile, Recorded, State};

/// One of the fake metadata hosts, by the path root it is served under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MetadataHost {
    /// `{uri}/doi` plays `https://doi.org` (`ZOTERO_DOI_BASE`).
    Doi,
    /// `{uri}/crossref` plays `https://api.crossref.org` (`ZOTERO_CROSSREF_BASE`).
    Crossref,
    /// `{uri}/datacite` plays `https://api.datacite.org` (`ZOTERO_DATACITE_BASE`).
    DataCite,
    /// `{uri}/arxiv-api` plays `https://export.arxiv.org` (`ZOTERO_ARXIV_API_BASE`).
    ArxivApi,
    /// `{uri}/openlibrary` plays `https://openlibrary.org` (`ZOTERO_OPENLIBRARY_BASE`).
    OpenLibrary,
    /// `{uri}/ncbi` plays `https://eutils.ncbi.nlm.nih.gov` and the PMC id converter's hosts
    /// (`ZOTERO_NCBI_BASE`).
    Ncbi,
    /// `{uri}/unpaywall` plays `https://api.unpaywall.org` (`ZOTERO_UNPAYWALL_BASE`).
    Unpaywall,
    /// `{uri}/oa`: the open-access copies Unpaywall points to (repositories, publishers).
    OpenAccess,
    /// `{uri}/openalex` plays `https://api.openalex.org` (`ZOTERO_OPENALEX_BASE`).
    OpenAlex,
}

impl MetadataHost {
    /// Every fake metadata host.
    pub const ALL: [MetadataHost; 9] = [
        MetadataHost::Doi,
        MetadataHost::Crossref,
        MetadataHost::DataCite,
        MetadataHost::ArxivApi,
        MetadataHost::OpenLibrary,
        MetadataHost::Ncbi,
        MetadataHost::Unpaywall,
        MetadataHost::OpenAccess,
        MetadataHost::OpenAlex,
    ];

    /// The path root on the emulator, e.g. `/crossref`.
    pub fn root(self) -> &'static str {
        match self {
            MetadataHost::Doi => "/doi",
            MetadataHost::Crossref => "/crossref",
            MetadataHost::DataCite => "/datacite",
            MetadataHost::ArxivApi => "/arxiv-api",
            MetadataHost::OpenLibrary => "/openlibrary",
            MetadataHost::Ncbi => "/ncbi",
            MetadataHost::Unpaywall => "/unpaywall",
            MetadataHost::OpenAccess => "/oa",
            MetadataHost::OpenAlex => "/openalex",
        }
    }

    /// The public host the root stands for.
    pub fn public_root(self) -> &'static str {
        match self {
            MetadataHost::Doi => "https://doi.org",
            MetadataHost::Crossref => "https://api.crossref.org",
            MetadataHost::DataCite => "https://api.datacite.org",
            MetadataHost::ArxivApi => "https://export.arxiv.org",
            MetadataHost::OpenLibrary => "https://openlibrary.org",
            MetadataHost::Ncbi => "https://eutils.ncbi.nlm.nih.gov",
            MetadataHost::Unpaywall => "https://api.unpaywall.org",
            MetadataHost::OpenAccess => "(repositories and publishers)",
            MetadataHost::OpenAlex => "https://api.openalex.org",
        }
    }

    /// The host a request path goes to (`/crossref/works/…` → `Crossref`).
    pub fn of_path(path: &str) -> Option<MetadataHost> {
        MetadataHost::ALL.into_iter().find(|h| {
            let root = h.root();
            path == root
                || path
                    .strip_prefix(root)
                    .is_some_and(|rest| rest.starts_with('/'))
        })
    }

    /// What the service publishes as its limit: at most `n` requests per `window`, for a
    /// request with these query parameters and `User-Agent` (`None`: no published limit).
    fn limit(self, req: &Recorded) -> Option<(usize, Duration)> {
        let second = Duration::from_secs(1);
        match self {
            // Since December 2025: 5/s in the public pool, 10/s in the polite one.
            MetadataHost::Crossref => Some((if polite(req) { 10 } else { 5 }, second)),
            // "no more than one request every three seconds".
            MetadataHost::ArxivApi => Some((1, Duration::from_secs(3))),
            // "max 100 requests per second" for every user.
            MetadataHost::OpenAlex => Some((100, second)),
            // 3/s without an API key, 10/s with one.
            MetadataHost::Ncbi => Some((
                if query(req, "api_key").is_some() {
                    10
                } else {
                    3
                },
                second,
            )),
            _ => None,
        }
    }
}

/// The first non-empty value of a query parameter.
pub(crate) fn query<'a>(req: &'a Recorded, name: &str) -> Option<&'a str> {
    req.query
        .iter()
        .find(|(k, v)| k == name && !v.is_empty())
        .map(|(_, v)| v.as_str())
}

/// Crossref's polite pool: a `mailto` parameter or a `mailto:` in the `User-Agent`.
pub(crate) fn polite(req: &Recorded) -> bool {
    query(req, "mailto").is_some()
        || req
            .header("user-agent")
            .is_some_and(|ua| ua.contains("mailto:"))
}

/// The metadata the fake hosts serve, by identifier.
pub(crate) struct MetaState {
    /// Lower-case DOI → Crossref `message` (a work).
    pub(crate) crossref: BTreeMap<String, Value>,
    /// Lower-case DOI → DataCite `data` (a `dois` resource).
    pub(crate) datacite: BTreeMap<String, Value>,
    /// Lower-case DOI → the CSL-JSON its agency answers (else derived from the record).
    pub(crate) csl: BTreeMap<String, Value>,
    /// arXiv id without version → (latest version, its Atom `<entry>`).
    pub(crate) arxiv: BTreeMap<String, (u32, String)>,
    /// Open Library records (`jscmd=data` shape) and an index of their ISBNs.
    pub(crate) books: Vec<Value>,
    pub(crate) isbns: BTreeMap<String, usize>,
    /// PMID → PubMed esummary document summary.
    pub(crate) pubmed: BTreeMap<String, Value>,
    /// PMC id converter records (`pmcid`, `pmid`, `doi`, `mid`).
    pub(crate) pmc: Vec<Value>,
    /// Lower-case DOI → Unpaywall record (`{EMU}` stands for the emulator's URI).
    pub(crate) unpaywall: BTreeMap<String, Value>,
    /// Path below `/oa` → file.
    pub(crate) oa: HashMap<String, HostedFile>,
    /// Answer over-limit requests as the services do (off: only injected faults refuse).
    pub(crate) enforce_limits: bool,
    /// The status of doi.org's redirects (302 like the real resolver).
    pub(crate) doi_redirect: u16,
    /// OpenAlex works by short id (`W…`).
    pub(crate) openalex: openalex::Works,
}

impl MetaState {
    /// No metadata at all.
    pub(crate) fn empty() -> MetaState {
        MetaState {
            crossref: BTreeMap::new(),
            datacite: BTreeMap::new(),
            csl: BTreeMap::new(),
            arxiv: BTreeMap::new(),
            books: Vec::new(),
            isbns: BTreeMap::new(),
            pubmed: BTreeMap::new(),
            pmc: Vec::new(),
            unpaywall: BTreeMap::new(),
            oa: HashMap::new(),
            enforce_limits: false,
            doi_redirect: 302,
            openalex: openalex::Works::new(),
        }
    }

    pub(crate) fn add_crossref(&mut self, work: Value) {
        let msg = work.get("message").cloned().unwrap_or(work);
        let doi = msg["DOI"]
            .as_str()
            .expect("a Crossref work has a DOI")
            .to_lowercase();
        self.crossref.insert(doi, msg);
    }

    pub(crate) fn add_datacite(&mut self, doc: Value) {
        let data = doc.get("data").cloned().unwrap_or(doc);
        let doi = data["attributes"]["doi"]
            .as_str()
            .or(data["id"].as_str())
            .expect("a DataCite record has a DOI")
            .to_lowercase();
        self.datacite.insert(doi, data);
    }

    pub(crate) fn add_book(&mut self, book: Value) {
        let idx = self.books.len();
        for kind in ["isbn_10", "isbn_13"] {
            for isbn in book["identifiers"][kind].as_array().into_iter().flatten() {
                if let Some(i) = isbn.as_str() {
                    self.isbns.insert(others::normalize_isbn(i), idx);
                }
            }
        }
        self.books.push(book);
    }

    pub(crate) fn add_pubmed(&mut self, summary: Value) {
        let uid = summary["uid"]
            .as_str()
            .expect("a summary has a uid")
            .to_string();
        self.pubmed.insert(uid, summary);
    }

    pub(crate) fn add_unpaywall(&mut self, record: Value) {
        let doi = record["doi"]
            .as_str()
            .expect("an Unpaywall record has a DOI")
            .to_lowercase();
        self.unpaywall.insert(doi, record);
    }
}

/// Answers a request to a metadata host (`None`: the path is not one of theirs).
pub(crate) fn handle(st: &mut State, base: &str, req: &Recorded) -> Option<Answer> {
    let host = MetadataHost::of_path(&req.path)?;
    if st.meta.enforce_limits {
        if let Some(a) = over_limit(st, host, req) {
            return Some(a);
        }
    }
    if req.method != "GET" && req.method != "HEAD" {
        return Some(Answer::text(405, "Method Not Allowed"));
    }
    let rest = &req.path[host.root().len()..];
    let meta = &st.meta;
    Some(match host {
        MetadataHost::Doi => doi::resolver(meta, base, req, rest),
        MetadataHost::Crossref => doi::crossref(meta, req, rest),
        MetadataHost::DataCite => doi::datacite(meta, req, rest),
        MetadataHost::ArxivApi => arxiv_api::query(meta, req, rest),
        MetadataHost::OpenLibrary => others::openlibrary(meta, req, rest),
        MetadataHost::Ncbi => others::ncbi(st, req, rest),
        MetadataHost::Unpaywall => others::unpaywall(meta, base, req, rest),
        MetadataHost::OpenAccess => others::open_access(meta, rest),
        MetadataHost::OpenAlex => openalex::works(meta, req, rest),
    })
}

/// The refusal of a request over the host's published limit (counting the refused ones, as
/// the services do), or `None`.
fn over_limit(st: &State, host: MetadataHost, req: &Recorded) -> Option<Answer> {
    let (n, window) = host.limit(req)?;
    let now = req.at;
    let recent = st
        .requests
        .iter()
        .filter(|r| MetadataHost::of_path(&r.path) == Some(host))
        .filter(|r| now.saturating_duration_since(r.at) < window)
        .count();
    (recent > n).then(|| throttled(host, n, window))
}

/// How each service refuses a request over its limit.
fn throttled(host: MetadataHost, n: usize, window: Duration) -> Answer {
    match host {
        MetadataHost::ArxivApi => {
            Answer::text(503, "Rate exceeded.").header("Retry-After", window.as_secs())
        }
        MetadataHost::Ncbi => Answer::raw(
            429,
            serde_json::to_vec(&serde_json::json!({
                "error": "API rate limit exceeded",
                "api-key": "127.0.0.1",
                "count": (n + 1).to_string(),
                "limit": n.to_string(),
            }))
            .unwrap(),
            "application/json",
        )
        .header("Retry-After", 1),
        _ => Answer::text(429, "Too Many Requests").header("Retry-After", 1),
    }
}

/// Finishes an answer of a metadata host: no Zotero API headers, Crossref's rate-limit headers
/// on every answer, and an injected refusal worded as the service words it.
pub(crate) fn finish(mut answer: Answer, req: &Recorded, fault: Option<&FaultKind>) -> Answer {
    let Some(host) = MetadataHost::of_path(&req.path) else {
        return answer;
    };
    answer.bare = true;
    let refused = matches!(
        fault,
        Some(FaultKind::RateLimited { .. } | FaultKind::Unavailable { .. } | FaultKind::Status(_))
    );
    if refused {
        match (host, answer.status) {
            (MetadataHost::ArxivApi, 429 | 503) => {
                answer.body = b"Rate exceeded.".to_vec();
            }
            (MetadataHost::Ncbi, 429) => {
                answer.body = br#"{"error":"API rate limit exceeded","api-key":"127.0.0.1","count":"4","limit":"3"}"#
                    .to_vec();
                answer.content_type = Some("application/json".into());
            }
            (MetadataHost::Unpaywall | MetadataHost::DataCite, status) => {
                let body = serde_json::json!({
                    "HTTP_status_code": status,
                    "error": true,
                    "message": if status == 429 { "Too many requests" } else { "Service unavailable" },
                });
                answer.body = serde_json::to_vec(&body).unwrap();
                answer.content_type = Some("application/json".into());
            }
            _ => {}
        }
    }
    if host == MetadataHost::Crossref {
        let limit = host.limit(req).map_or(5, |(n, _)| n);
        answer = answer
            .header("X-Rate-Limit-Limit", limit)
            .header("X-Rate-Limit-Interval", "1s")
            .header("X-API-Pool", if polite(req) { "polite" } else { "public" })
            .header("Access-Control-Allow-Origin", "*");
    }
    answer
}

impl Emulator {
    /// Where a fake metadata host is served, e.g. `http://127.0.0.1:PORT/crossref`.
    pub fn metadata_base(&self, host: MetadataHost) -> String {
        format!("{}{}", self.uri(), host.root())
    }
    /// The fake doi.org (use as `ZOTERO_DOI_BASE`): `GET {base}/{doi}`.
    pub fn doi_base(&self) -> String {
        self.metadata_base(MetadataHost::Doi)
    }
    /// The fake Crossref REST API (use as `ZOTERO_CROSSREF_BASE`): `GET {base}/works/{doi}`.
    pub fn crossref_base(&self) -> String {
        self.metadata_base(MetadataHost::Crossref)
    }
    /// The fake DataCite REST API (use as `ZOTERO_DATACITE_BASE`): `GET {base}/dois/{doi}`.
    pub fn datacite_base(&self) -> String {
        self.metadata_base(MetadataHost::DataCite)
    }
    /// The fake arXiv API (use as `ZOTERO_ARXIV_API_BASE`): `GET {base}/api/query?id_list=`.
    pub fn arxiv_api_base(&self) -> String {
        self.metadata_base(MetadataHost::ArxivApi)
    }
    /// The fake Open Library (use as `ZOTERO_OPENLIBRARY_BASE`): `GET {base}/api/books?…`.
    pub fn openlibrary_base(&self) -> String {
        self.metadata_base(MetadataHost::OpenLibrary)
    }
    /// The fake NCBI (use as `ZOTERO_NCBI_BASE`): `{base}/entrez/eutils/esummary.fcgi` and
    /// `{base}/pmc/utils/idconv/v1.0/`.
    pub fn ncbi_base(&self) -> String {
        self.metadata_base(MetadataHost::Ncbi)
    }
    /// The fake Unpaywall (use as `ZOTERO_UNPAYWALL_BASE`): `GET {base}/v2/{doi}?email=`.
    pub fn unpaywall_base(&self) -> String {
        self.metadata_base(MetadataHost::Unpaywall)
    }
    /// The fake OpenAlex (use as `ZOTERO_OPENALEX_BASE`): `GET {base}/works/doi:{doi}`,
    /// `GET {base}/works?filter=cites:W…&cursor=*`.
    pub fn openalex_base(&self) -> String {
        self.metadata_base(MetadataHost::OpenAlex)
    }
    /// Adds (or replaces) an OpenAlex work (as `GET /works/W…` answers it; see
    /// [`openalex_work`] to build one).
    pub fn add_openalex_work(&self, work: Value) {
        self.state.lock().unwrap().meta.add_openalex(work);
    }
    /// Adds many OpenAlex works at once (a graph of thousands).
    pub fn add_openalex_works(&self, works: impl IntoIterator<Item = Value>) {
        let mut st = self.state.lock().unwrap();
        for w in works {
            st.meta.add_openalex(w);
        }
    }
    /// Where the open-access copies are served: `{uri}/oa`.
    pub fn oa_base(&self) -> String {
        self.metadata_base(MetadataHost::OpenAccess)
    }
    /// The absolute URL of an open-access file (`path` below `/oa`).
    pub fn oa_url(&self, path: &str) -> String {
        format!("{}/{}", self.oa_base(), path.trim_start_matches('/'))
    }

    /// Every request a metadata host received, in order (refused ones included).
    pub fn requests_to(&self, host: MetadataHost) -> Vec<Recorded> {
        let st = self.state.lock().unwrap();
        st.requests
            .iter()
            .filter(|r| MetadataHost::of_path(&r.path) == Some(host))
            .cloned()
            .collect()
    }

    /// How many requests a metadata host received.
    pub fn count_to(&self, host: MetadataHost) -> usize {
        self.requests_to(host).len()
    }

    /// The shortest time between two consecutive requests to a host (`None` below two).
    pub fn min_interval(&self, host: MetadataHost) -> Option<Duration> {
        let reqs = self.requests_to(host);
        reqs.windows(2)
            .map(|w| w[1].at.saturating_duration_since(w[0].at))
            .min()
    }

    /// `true`: requests over a service's published limit are refused as it refuses them
    /// (Crossref 5/s, or 10/s polite: `429`; arXiv's API one per 3 s: `503 Rate exceeded.`;
    /// NCBI 3/s, or 10/s with `api_key`: `429` JSON). Off by default.
    pub fn enforce_rate_limits(&self, on: bool) {
        self.state.lock().unwrap().meta.enforce_limits = on;
    }

    /// The status of the fake doi.org's redirects (301, 302, 303, 307, 308; 302 by default).
    pub fn doi_redirect_status(&self, status: u16) {
        self.state.lock().unwrap().meta.doi_redirect = status;
    }

    /// Forgets the whole metadata catalogue (every host then knows nothing).
    pub fn clear_metadata(&self) {
        let mut st = self.state.lock().unwrap();
        let (enforce, redirect) = (st.meta.enforce_limits, st.meta.doi_redirect);
        st.meta = MetaState::empty();
        st.meta.enforce_limits = enforce;
        st.meta.doi_redirect = redirect;
    }

    /// Adds a Crossref work (the `message` of `GET /works/{doi}`, or the whole answer). doi.org
    /// then sends its DOI to Crossref, whose content negotiation derives CSL-JSON from it
    /// unless [`Emulator::add_csl`] gave one.
    pub fn add_crossref_work(&self, work: Value) {
        self.state.lock().unwrap().meta.add_crossref(work);
    }

    /// Adds a DataCite DOI (the `data` of `GET /dois/{doi}`, or the whole answer).
    pub fn add_datacite_doi(&self, record: Value) {
        self.state.lock().unwrap().meta.add_datacite(record);
    }

    /// The CSL-JSON content negotiation answers for `doi` (instead of one derived from the
    /// agency's record). A DOI known only this way is answered by the fake Crossref.
    pub fn add_csl(&self, doi: &str, csl: Value) {
        let mut st = self.state.lock().unwrap();
        st.meta.csl.insert(doi.to_lowercase(), csl);
    }

    /// Adds (or replaces) a paper on the fake arXiv API.
    pub fn add_arxiv_entry(&self, paper: &ArxivPaper) {
        let mut st = self.state.lock().unwrap();
        st.meta
            .arxiv
            .insert(paper.id.clone(), (paper.version, paper.to_entry()));
    }

    /// Adds every `<entry>` of an Atom feed (or a lone `<entry>`) as arXiv's API wrote it.
    pub fn add_arxiv_atom(&self, atom: &str) {
        let mut st = self.state.lock().unwrap();
        for (id, version, entry) in arxiv_api::entries(atom) {
            st.meta.arxiv.insert(id, (version, entry));
        }
    }

    /// Adds an Open Library edition (the value under `"ISBN:…"` in a `jscmd=data` answer),
    /// found by each of its `identifiers.isbn_10` and `isbn_13`.
    pub fn add_openlibrary_book(&self, record: Value) {
        self.state.lock().unwrap().meta.add_book(record);
    }

    /// Adds a PubMed document summary (the value under the PMID in an esummary answer).
    pub fn add_pubmed_summary(&self, summary: Value) {
        self.state.lock().unwrap().meta.add_pubmed(summary);
    }

    /// Adds a PMC id converter record (`{"pmcid","pmid","doi"}`, as its JSON answer has them).
    pub fn add_pmc_record(&self, record: Value) {
        self.state.lock().unwrap().meta.pmc.push(record);
    }

    /// Adds an Unpaywall record (`GET /v2/{doi}`'s answer); `{EMU}` in its strings stands for
    /// the emulator's URI (so `"{EMU}/oa/x.pdf"` is [`Emulator::oa_url`]`("x.pdf")`).
    pub fn add_unpaywall(&self, record: Value) {
        self.state.lock().unwrap().meta.add_unpaywall(record);
    }

    /// Serves `file` at `{uri}/oa/{path}`.
    pub fn serve_oa(&self, path: &str, file: HostedFile) {
        let mut st = self.state.lock().unwrap();
        st.meta
            .oa
            .insert(path.trim_start_matches('/').to_string(), file);
    }

    /// Registers a small PDF on the fake arXiv PDF host (`/arxiv/pdf/…`) for each arXiv paper
    /// of the catalogue, at its latest version.
    pub fn add_catalogue_arxiv_pdfs(&self) {
        let papers: Vec<(String, u32)> = {
            let st = self.state.lock().unwrap();
            st.meta
                .arxiv
                .iter()
                .map(|(id, (v, _))| (id.clone(), *v))
                .collect()
        };
        for (id, v) in papers {
            self.add_arxiv(
                &format!("{id}v{v}"),
                catalogue::tiny_pdf(&format!("arXiv:{id}v{v}")),
            );
        }
    }
}
