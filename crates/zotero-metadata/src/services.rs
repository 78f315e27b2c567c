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
use http_body_util::Empty;
use hyper::header::HeaderValue;
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client;
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;
use zotero_net::{
    guarded_https_connector, pooled_client, AddressPolicy, GuardedConnector, InFlight, RetryPolicy,
    Secrets,
};

mod endpoints;
mod openalex;
#[cfg(test)]
mod tests;
mod transport;

pub use endpoints::{encode_path, encode_query, CROSSREF_DOIS_PER_REQUEST};
pub use openalex::{WorksPage, WorksQuery, MAX_IDS_PER_FILTER, OPENALEX_DAILY_REQUESTS};

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
    /// OpenAlex's works API (`https://api.openalex.org`): the citation graph.
    OpenAlex,
}

impl Service {
    pub const ALL: [Service; 8] = [
        Service::Doi,
        Service::Crossref,
        Service::DataCite,
        Service::Arxiv,
        Service::OpenLibrary,
        Service::Ncbi,
        Service::Unpaywall,
        Service::OpenAlex,
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
            Service::OpenAlex => "OpenAlex",
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
            Service::OpenAlex => "ZOTERO_OPENALEX_BASE",
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
            Service::OpenAlex => "https://api.openalex.org",
        }
    }

    /// The least time between two requests to the service (their starts), as each asks:
    /// arXiv's terms one per 3 s; NCBI 3 per second (10 with an API key); Crossref 10 per
    /// second in the polite pool (with a contact address), 5 otherwise; the others a
    /// conservative 5 per second (Open Library asks for restraint, DataCite and Unpaywall
    /// publish generous limits, doi.org none); OpenAlex 10 per second (it allows more, but
    /// an agent's graph walk never needs it, and its daily allowance is the real bound).
    pub fn min_interval(self, polite: bool, ncbi_key: bool) -> Duration {
        let ms = match self {
            Service::Arxiv => 3_000,
            Service::Ncbi if ncbi_key => 100,
            Service::Ncbi => 334,
            Service::Crossref if polite => 100,
            Service::Crossref => 200,
            Service::OpenAlex => 100,
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
    /// OpenAlex's API key (`api_key=`): free, and needed since February 2026 for more than a
    /// few list requests a day.
    pub openalex_api_key: Option<zotero_net::SecretString>,
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
    /// This process spent the day's allowance of requests to the service.
    #[error(
        "{service}: this server sent its {limit} requests of the day (its daily allowance); \
         try again after midnight UTC"
    )]
    DailyBudget { service: &'static str, limit: u32 },
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
    /// OpenAlex requests sent on a UTC day: (days since 1970, count).
    openalex_day: std::sync::Mutex<(u64, u32)>,
}

/// Why the services' client could not be built.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ServicesSetupError {
    /// The TLS connector could not be set up (the message says why).
    #[error("{0}")]
    Tls(zotero_net::TlsSetupError),
    #[error("ZOTERO_CONTACT_EMAIL cannot be sent in a header")]
    ContactEmail,
}

impl MetadataServices {
    pub fn new(config: ServicesConfig) -> Result<Self, ServicesSetupError> {
        let client = pooled_client().build(
            guarded_https_connector(config.policy, config.timeout)
                .map_err(ServicesSetupError::Tls)?,
        );
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
        let user_agent =
            HeaderValue::from_str(&agent).map_err(|_| ServicesSetupError::ContactEmail)?;
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
            openalex_day: std::sync::Mutex::new((0, 0)),
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
}
