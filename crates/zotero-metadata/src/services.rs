//! The metadata services and the manners they ask for, kept in code: every request names the
//! project and, when one is set, a contact address (`User-Agent: zotero-mcp/… (+url;
//! mailto:…)`, Crossref's polite pool); each service is paced to its published rate (arXiv's
//! API one request per 3 s on one connection, NCBI 3 per second without a key, Crossref 10
//! per second polite or 5 public, …) by a pacer shared by the whole process; 429 and 503 are
//! retried with backoff and `Retry-After` through the shared network layer; Unpaywall is only
//! asked with an e-mail. A separate HTTP client: the Zotero API key never travels here.
//!
//! Every base is configurable (`ZOTERO_DOI_BASE`, …) for tests and mirrors; a base replaces
//! the public host's root (`https://doi.org` → `{base}`).
//!
//! Every connection goes through zotero-net's address guard (redirect hops and configured
//! bases alike: loopback and private addresses only with `ZOTERO_FETCH_ALLOW_PRIVATE=1`); an
//! identifier is sent as path segments that cannot leave the base (`.` and `..` refused), or
//! as an encoded query value; every text of an answer that reaches a message goes through
//! [`MetadataServices::clean`] (secrets scrubbed, length bounded).

use std::collections::HashMap;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Empty, Limited};
use hyper::header::{HeaderValue, ACCEPT, LOCATION, USER_AGENT};
use hyper::{Request, StatusCode, Uri};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client;
use serde_json::Value;
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;
use zotero_net::{
    find_forbidden, guarded_https_connector, pooled_client, retry_after, AddressPolicy, Attempt,
    ErrorChain, ForbiddenAddress, GuardedConnector, InFlight, Retry, RetryError, RetryPolicy,
    Secrets,
};

/// The services asked, each with its own pace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Service {
    /// DOI content negotiation (`https://doi.org`), which redirects to the agency.
    Doi,
    Crossref,
    DataCite,
    /// arXiv's API (`https://export.arxiv.org`), not its PDFs.
    Arxiv,
    OpenLibrary,
    /// NCBI E-utilities and the PMC ID converter (`https://eutils.ncbi.nlm.nih.gov`, …).
    Ncbi,
    Unpaywall,
}

impl Service {
    pub const ALL: [Service; 7] = [
        Service::Doi,
        Service::Crossref,
        Service::DataCite,
        Service::Arxiv,
        Service::OpenLibrary,
        Service::Ncbi,
        Service::Unpaywall,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Service::Doi => "doi.org",
            Service::Crossref => "Crossref",
            Service::DataCite => "DataCite",
            Service::Arxiv => "arXiv",
            Service::OpenLibrary => "Open Library",
            Service::Ncbi => "NCBI",
            Service::Unpaywall => "Unpaywall",
        }
    }

    /// The variable that replaces the public root.
    pub fn variable(self) -> &'static str {
        match self {
            Service::Doi => "ZOTERO_DOI_BASE",
            Service::Crossref => "ZOTERO_CROSSREF_BASE",
            Service::DataCite => "ZOTERO_DATACITE_BASE",
            Service::Arxiv => "ZOTERO_ARXIV_API_BASE",
            Service::OpenLibrary => "ZOTERO_OPENLIBRARY_BASE",
            Service::Ncbi => "ZOTERO_NCBI_BASE",
            Service::Unpaywall => "ZOTERO_UNPAYWALL_BASE",
        }
    }

    /// The public root a base replaces.
    pub fn public_base(self) -> &'static str {
        match self {
            Service::Doi => "https://doi.org",
            Service::Crossref => "https://api.crossref.org",
            Service::DataCite => "https://api.datacite.org",
            Service::Arxiv => "https://export.arxiv.org",
            Service::OpenLibrary => "https://openlibrary.org",
            Service::Ncbi => "https://eutils.ncbi.nlm.nih.gov",
            Service::Unpaywall => "https://api.unpaywall.org",
        }
    }

    /// The least time between two requests to the service (their starts), as each asks:
    /// arXiv's terms one per 3 s; NCBI 3 per second (10 with an API key); Crossref 10 per
    /// second in the polite pool (with a contact address), 5 otherwise; the others a
    /// conservative 5 per second (Open Library asks for restraint, DataCite and Unpaywall
    /// publish generous limits, doi.org none).
    pub fn min_interval(self, polite: bool, ncbi_key: bool) -> Duration {
        let ms = match self {
            Service::Arxiv => 3_000,
            Service::Ncbi if ncbi_key => 100,
            Service::Ncbi => 334,
            Service::Crossref if polite => 100,
            Service::Crossref => 200,
            Service::OpenLibrary => 334,
            Service::Doi | Service::DataCite | Service::Unpaywall => 200,
        };
        Duration::from_millis(ms)
    }
}

/// How the services are reached.
#[derive(Debug, Clone)]
pub struct ServicesConfig {
    /// The root of each service (no trailing `/`); the public one when not configured.
    pub bases: HashMap<Service, String>,
    /// `ZOTERO_CONTACT_EMAIL`: in the user agent and Crossref's `mailto`, NCBI's `email`,
    /// and required by Unpaywall.
    pub contact_email: Option<String>,
    /// `NCBI_API_KEY`-style key for E-utilities (10 requests a second instead of 3).
    pub ncbi_api_key: Option<zotero_net::SecretString>,
    pub timeout: Duration,
    pub retry: RetryPolicy,
    /// Overrides every service's pace (tests of behaviour that do not measure pacing).
    pub min_interval_override: Option<Duration>,
    /// Which addresses the services (and the hosts they redirect to) may be reached at:
    /// public ones only unless `ZOTERO_FETCH_ALLOW_PRIVATE=1`.
    pub policy: AddressPolicy,
    /// Every configured secret (the NCBI key, the Zotero API key, …): never shown.
    pub secrets: Secrets,
}

impl ServicesConfig {
    pub fn base(&self, s: Service) -> &str {
        self.bases
            .get(&s)
            .map(String::as_str)
            .unwrap_or(s.public_base())
    }
}

/// Why a service could not be asked or understood.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    #[error("could not reach {service}: {reason}")]
    Network {
        service: &'static str,
        reason: String,
    },
    #[error("{service} did not answer within {secs} s")]
    Timeout { service: &'static str, secs: f64 },
    #[error("{service} answered {status}: {message}")]
    Status {
        service: &'static str,
        status: u16,
        message: String,
    },
    #[error("{service} asked to wait {secs} s before the next request; try again later")]
    RateLimited { service: &'static str, secs: u64 },
    #[error("{service} sent an answer that could not be read: {reason}")]
    BadAnswer {
        service: &'static str,
        reason: String,
    },
    #[error("Unpaywall is only asked with a contact address: set ZOTERO_CONTACT_EMAIL")]
    NoContact,
    /// The service's address, or one it redirected to, is not public.
    #[error("{service}: {detail}")]
    Forbidden {
        service: &'static str,
        detail: String,
    },
    /// The identifier cannot be sent without leaving the service's path.
    #[error("{0}")]
    BadIdentifier(String),
    #[error("the call was cancelled")]
    Cancelled,
}

/// An answer: its status and body (redirects followed).
#[derive(Debug, Clone)]
pub struct Answer {
    pub status: u16,
    pub body: Bytes,
}

/// Redirects followed (doi.org sends one to the agency).
const MAX_REDIRECTS: usize = 5;
/// The largest answer read (a metadata record is kilobytes; an arXiv feed of 20 entries
/// some tens; a Crossref work with thousands of references about a megabyte).
pub const MAX_ANSWER_BYTES: usize = 4 * 1024 * 1024;
/// The most characters of a service's text (an error body, a record's value) in a message.
pub const MAX_UPSTREAM_TEXT: usize = 300;

type HttpClient = Client<HttpsConnector<GuardedConnector>, Empty<Bytes>>;

/// The next moment a request to a service may start, and the requests it has in flight
/// (a burst queues here in order: the pacing spaces starts, this bounds sockets).
struct Pacer {
    next: Mutex<Instant>,
    in_flight: InFlight,
}

/// The client of every metadata service, shared by the process (the pacers with it).
pub struct MetadataServices {
    http: HttpClient,
    config: ServicesConfig,
    user_agent: HeaderValue,
    pacers: HashMap<Service, Pacer>,
}

impl MetadataServices {
    pub fn new(config: ServicesConfig) -> Result<Self, String> {
        let client = pooled_client().build(guarded_https_connector(config.policy, config.timeout)?);
        let agent = match &config.contact_email {
            Some(mail) => format!(
                "zotero-mcp/{} (+https://github.com/zotero-mcp/zotero-mcp; mailto:{mail})",
                env!("CARGO_PKG_VERSION")
            ),
            None => format!(
                "zotero-mcp/{} (+https://github.com/zotero-mcp/zotero-mcp)",
                env!("CARGO_PKG_VERSION")
            ),
        };
        let user_agent = HeaderValue::from_str(&agent)
            .map_err(|_| "ZOTERO_CONTACT_EMAIL cannot be sent in a header".to_string())?;
        let now = Instant::now();
        let pacers = Service::ALL
            .into_iter()
            .map(|s| {
                (
                    s,
                    Pacer {
                        next: Mutex::new(now),
                        in_flight: InFlight::default(),
                    },
                )
            })
            .collect();
        Ok(Self {
            http: client,
            config,
            user_agent,
            pacers,
        })
    }

    pub fn config(&self) -> &ServicesConfig {
        &self.config
    }

    /// A service's text made fit for an answer or a log line: every configured secret
    /// replaced, cut to [`MAX_UPSTREAM_TEXT`] characters. The one path such text takes.
    pub fn clean(&self, text: &str) -> String {
        self.clean_to(text, MAX_UPSTREAM_TEXT)
    }

    /// [`MetadataServices::clean`] to another bound (a message made of several texts).
    pub fn clean_to(&self, text: &str, max_chars: usize) -> String {
        self.config.secrets.clean(text, max_chars)
    }

    fn interval(&self, s: Service) -> Duration {
        self.config.min_interval_override.unwrap_or_else(|| {
            s.min_interval(
                self.config.contact_email.is_some(),
                self.config.ncbi_api_key.is_some(),
            )
        })
    }

    /// Waits for the service's turn and takes it: requests start at least its interval
    /// apart, whoever sends them. arXiv's is held for the whole request (one connection).
    async fn take_turn(&self, s: Service, cancel: &CancellationToken) -> Result<(), ServiceError> {
        let Some(pacer) = self.pacers.get(&s) else {
            return Ok(());
        };
        let mut next = tokio::select! {
            g = pacer.next.lock() => g,
            () = cancel.cancelled() => return Err(ServiceError::Cancelled),
        };
        let now = Instant::now();
        if *next > now {
            let wait = *next - now;
            tracing::debug!(
                service = s.name(),
                wait_ms = wait.as_millis() as u64,
                "pacing"
            );
            tokio::select! {
                () = tokio::time::sleep(wait) => {},
                () = cancel.cancelled() => return Err(ServiceError::Cancelled),
            }
        }
        *next = Instant::now() + self.interval(s);
        Ok(())
    }

    /// GETs `path_and_query` below the service's base (or a whole `https://` URL), paced, retried on 429/5xx, redirects
    /// followed; any status is answered (the caller decides what 404 means).
    pub async fn get(
        &self,
        s: Service,
        path_and_query: &str,
        accept: &'static str,
        cancel: &CancellationToken,
    ) -> Result<Answer, ServiceError> {
        let url = if path_and_query.starts_with("https://") || path_and_query.starts_with("http://")
        {
            path_and_query.to_string()
        } else {
            format!("{}{}", self.config.base(s), path_and_query)
        };
        let retry = Retry {
            policy: &self.config.retry,
            gate: None,
            repeatable: true,
            cancel,
        };
        let outcome = retry
            .run(|_| async {
                // A place first, then the turn: the pacing is kept among those let through.
                let _place = match self.pacers.get(&s) {
                    Some(pacer) => match pacer.in_flight.acquire(cancel).await {
                        Ok(place) => Some(place),
                        Err(_) => return Attempt::Fatal(ServiceError::Cancelled),
                    },
                    None => None,
                };
                if let Err(e) = self.take_turn(s, cancel).await {
                    return Attempt::Fatal(e);
                }
                match self.fetch(s, &url, accept, cancel).await {
                    Ok((answer, wait)) => Attempt::judge(answer.status, wait, answer),
                    Err(e @ ServiceError::Cancelled) => Attempt::Fatal(e),
                    Err(e @ (ServiceError::Network { .. } | ServiceError::Timeout { .. })) => {
                        Attempt::Failed(e)
                    }
                    Err(e) => Attempt::Fatal(e),
                }
            })
            .await;
        match outcome {
            Ok((answer, _)) if answer.status == 429 => Err(ServiceError::RateLimited {
                service: s.name(),
                secs: 0,
            }),
            Ok((answer, _)) => Ok(answer),
            Err(RetryError::Failed(e)) => Err(e),
            Err(RetryError::Cancelled) => Err(ServiceError::Cancelled),
            Err(RetryError::WaitTooLong { wait, .. }) => Err(ServiceError::RateLimited {
                service: s.name(),
                secs: zotero_net::ceil_secs(wait),
            }),
        }
    }

    /// One attempt: the request and its redirects. Answers the `Retry-After` of a 429/503.
    async fn fetch(
        &self,
        s: Service,
        url: &str,
        accept: &'static str,
        cancel: &CancellationToken,
    ) -> Result<(Answer, Option<Duration>), ServiceError> {
        let mut target: Uri = url.parse().map_err(|e| ServiceError::Network {
            service: s.name(),
            // Not the URL itself: its query may carry the NCBI API key.
            reason: format!("the request URL could not be built: {e}"),
        })?;
        for hop in 0..=MAX_REDIRECTS {
            let request = Request::get(target.clone())
                .header(USER_AGENT, self.user_agent.clone())
                .header(ACCEPT, accept)
                .body(Empty::<Bytes>::new())
                .map_err(|e| ServiceError::Network {
                    service: s.name(),
                    reason: e.to_string(),
                })?;
            let response = tokio::select! {
                r = tokio::time::timeout(self.config.timeout, self.http.request(request)) => r,
                () = cancel.cancelled() => return Err(ServiceError::Cancelled),
            };
            let response = match response {
                Err(_) => {
                    return Err(ServiceError::Timeout {
                        service: s.name(),
                        secs: self.config.timeout.as_secs_f64(),
                    })
                }
                Ok(Err(e)) => {
                    if let Some(forbidden) = find_forbidden(&e) {
                        return Err(forbidden_error(s, forbidden, hop > 0));
                    }
                    return Err(ServiceError::Network {
                        service: s.name(),
                        reason: self.clean(&ErrorChain(&e).to_string()),
                    });
                }
                Ok(Ok(r)) => r,
            };
            let status = response.status();
            if is_redirect(status) {
                let location = response
                    .headers()
                    .get(LOCATION)
                    .and_then(|l| l.to_str().ok())
                    .ok_or_else(|| ServiceError::BadAnswer {
                        service: s.name(),
                        reason: format!("a {status} without a Location"),
                    })?;
                target = resolve(&target, location).ok_or_else(|| ServiceError::BadAnswer {
                    service: s.name(),
                    reason: "a redirect to something that is not an http(s) URL".into(),
                })?;
                continue;
            }
            let wait = retry_after(response.headers(), std::time::SystemTime::now());
            let body = tokio::select! {
                b = tokio::time::timeout(
                    self.config.timeout,
                    Limited::new(response.into_body(), MAX_ANSWER_BYTES).collect(),
                ) => b,
                () = cancel.cancelled() => return Err(ServiceError::Cancelled),
            };
            let body = match body {
                Err(_) => {
                    return Err(ServiceError::Timeout {
                        service: s.name(),
                        secs: self.config.timeout.as_secs_f64(),
                    })
                }
                Ok(Err(e)) => {
                    return Err(ServiceError::BadAnswer {
                        service: s.name(),
                        reason: self.clean(&format!(
                            "the answer could not be read (the most read is {} MB): {e}",
                            MAX_ANSWER_BYTES / (1024 * 1024)
                        )),
                    })
                }
                Ok(Ok(collected)) => collected.to_bytes(),
            };
            return Ok((
                Answer {
                    status: status.as_u16(),
                    body,
                },
                wait,
            ));
        }
        Err(ServiceError::BadAnswer {
            service: s.name(),
            reason: format!("more than {MAX_REDIRECTS} redirects"),
        })
    }

    /// The JSON of a 200; `None` for a 404 (or what the service says instead); an error
    /// for anything else.
    async fn json(
        &self,
        s: Service,
        path_and_query: &str,
        accept: &'static str,
        cancel: &CancellationToken,
    ) -> Result<Option<Value>, ServiceError> {
        let answer = self.get(s, path_and_query, accept, cancel).await?;
        match answer.status {
            200 => serde_json::from_slice(&answer.body).map(Some).map_err(|e| {
                ServiceError::BadAnswer {
                    service: s.name(),
                    reason: self.clean(&e.to_string()),
                }
            }),
            404 | 410 => Ok(None),
            status => Err(self.status_error(s, status, &answer.body)),
        }
    }

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

impl MetadataServices {
    fn status_error(&self, s: Service, status: u16, body: &[u8]) -> ServiceError {
        // Only the head of a long body is decoded: the message keeps a few hundred characters.
        let head = body
            .get(..body.len().min(4 * MAX_UPSTREAM_TEXT))
            .unwrap_or(body);
        let text = String::from_utf8_lossy(head);
        let message = self.clean(text.trim());
        ServiceError::Status {
            service: s.name(),
            status,
            message: if message.is_empty() {
                "no reason given".into()
            } else {
                message
            },
        }
    }
}

/// The refusal of a service's address (`redirected`: of the address it redirected to).
fn forbidden_error(s: Service, f: &ForbiddenAddress, redirected: bool) -> ServiceError {
    let detail = if redirected {
        format!(
            "it redirected to {f}; refused, as requests to this machine and private networks \
             are unless ZOTERO_FETCH_ALLOW_PRIVATE=1"
        )
    } else {
        format!(
            "refused to connect: {f}; a service on this machine or a private network \
             ({var} pointing there) needs ZOTERO_FETCH_ALLOW_PRIVATE=1",
            var = s.variable()
        )
    };
    ServiceError::Forbidden {
        service: s.name(),
        detail,
    }
}

fn is_redirect(status: StatusCode) -> bool {
    matches!(status.as_u16(), 301 | 302 | 303 | 307 | 308)
}

/// A `Location` against the URL it answered: absolute http(s), or a path on the same host.
fn resolve(base: &Uri, location: &str) -> Option<Uri> {
    if location.starts_with("http://") || location.starts_with("https://") {
        return location.parse().ok();
    }
    if location.starts_with('/') {
        let scheme = base.scheme_str()?;
        let authority = base.authority()?;
        return format!("{scheme}://{authority}{location}").parse().ok();
    }
    None
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
fn encode_list(ids: &[String]) -> String {
    ids.iter()
        .map(|i| encode_query(i))
        .collect::<Vec<_>>()
        .join(",")
}

/// Percent-encodes a query value.
pub fn encode_query(s: &str) -> String {
    encode(s, |b| b.is_ascii_alphanumeric() || b"-._~:".contains(&b))
}

fn encode(s: &str, keep: impl Fn(u8) -> bool) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dois_keep_their_slashes_and_lose_what_a_url_cannot_hold() {
        assert_eq!(
            encode_path("10.1038/nature12373").unwrap(),
            "10.1038/nature12373"
        );
        assert_eq!(
            encode_path("10.1002/(SICI)1097-4571 <x>#").unwrap(),
            "10.1002/(SICI)1097-4571%20%3Cx%3E%23"
        );
        assert_eq!(encode_query("a b&c=d@e"), "a%20b%26c%3Dd%40e");
    }

    #[test]
    fn an_identifier_never_leaves_the_base_path() {
        for doi in [
            "10.5555/../../../x",
            "10.5555/..",
            "10.5555/./x",
            "../10.5555/x",
            "10.5555/a/../../b",
        ] {
            let e = encode_path(doi).unwrap_err();
            assert!(matches!(e, ServiceError::BadIdentifier(_)), "{doi}: {e}");
        }
        // Dots inside a segment, and what only looks like a dot segment once decoded, stay.
        assert_eq!(encode_path("10.5555/a..b").unwrap(), "10.5555/a..b");
        assert_eq!(
            encode_path("10.5555/%2E%2E/x").unwrap(),
            "10.5555/%252E%252E/x"
        );
        assert_eq!(
            encode_path("10.5555/a?b#c\\d").unwrap(),
            "10.5555/a%3Fb%23c%5Cd"
        );
        assert_eq!(
            encode_list(&["1234".into(), "PMC1/../x".into(), "a,b&c".into()]),
            "1234,PMC1%2F..%2Fx,a%2Cb%26c"
        );
    }

    #[test]
    fn redirects_resolve_absolute_and_host_relative() {
        let base: Uri = "https://doi.org/10.1/x".parse().unwrap();
        assert_eq!(
            resolve(&base, "/y").unwrap().to_string(),
            "https://doi.org/y"
        );
        assert_eq!(
            resolve(&base, "https://api.crossref.org/z")
                .unwrap()
                .to_string(),
            "https://api.crossref.org/z"
        );
        assert!(resolve(&base, "ftp://x").is_none());
    }

    #[test]
    fn paces_are_the_ones_the_services_ask_for() {
        assert_eq!(
            Service::Arxiv.min_interval(true, true),
            Duration::from_secs(3)
        );
        assert!(Service::Ncbi.min_interval(false, false) >= Duration::from_millis(334));
        assert!(Service::Crossref.min_interval(false, false) >= Duration::from_millis(200));
        assert!(Service::Crossref.min_interval(true, false) >= Duration::from_millis(100));
    }
}
