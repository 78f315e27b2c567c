//! The metadata services (`add_by_identifier`, `zotero-mcp add`): each service's root, the
//! contact address and the NCBI key.

use std::collections::HashMap;

use zotero_metadata::services::Service;

use super::parse::{parse_base, Vars};
use super::ConfigError;

/// Where the metadata services are and who asks them.
#[derive(Debug, Clone)]
pub struct MetadataConfig {
    /// The root of each metadata service, when a variable (`ZOTERO_DOI_BASE`, …) replaces
    /// the public one.
    pub bases: HashMap<Service, String>,
    /// `ZOTERO_CONTACT_EMAIL`: named to the metadata services (Crossref's polite pool,
    /// NCBI), and what lets Unpaywall be asked for open-access PDFs.
    pub contact_email: Option<String>,
    /// `ZOTERO_NCBI_API_KEY`: E-utilities at 10 requests a second instead of 3.
    pub ncbi_api_key: Option<zotero_net::SecretString>,
    /// `ZOTERO_OPENALEX_API_KEY`: OpenAlex's free key (its daily allowance of list requests).
    pub openalex_api_key: Option<zotero_net::SecretString>,
}

impl MetadataConfig {
    pub(super) fn parse(get: Vars) -> Result<Self, ConfigError> {
        let mut bases = HashMap::new();
        for service in Service::ALL {
            if let Some(v) = get(service.variable()) {
                bases.insert(service, parse_base(service.variable(), &v)?);
            }
        }
        let contact_email = match get("ZOTERO_CONTACT_EMAIL") {
            None => None,
            Some(v) => Some(parse_email(&v)?),
        };
        let ncbi_api_key = get("ZOTERO_NCBI_API_KEY").map(zotero_net::SecretString::new);
        let openalex_api_key = get("ZOTERO_OPENALEX_API_KEY")
            .filter(|k| !k.trim().is_empty())
            .map(zotero_net::SecretString::new);
        Ok(MetadataConfig {
            bases,
            contact_email,
            ncbi_api_key,
            openalex_api_key,
        })
    }
}

/// A contact address: something@domain, printable, no spaces (it goes into a header and
/// query strings).
fn parse_email(v: &str) -> Result<String, ConfigError> {
    let ok = v.len() <= 254
        && v.chars().all(|c| c.is_ascii_graphic())
        && v.split_once('@')
            .is_some_and(|(user, domain)| !user.is_empty() && domain.contains('.'));
    if ok {
        Ok(v.to_string())
    } else {
        Err(ConfigError {
            var: "ZOTERO_CONTACT_EMAIL",
            value: v.to_string(),
            expected: "an e-mail address such as you@example.org".into(),
        })
    }
}
