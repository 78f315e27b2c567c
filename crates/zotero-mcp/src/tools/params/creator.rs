//! The seed's creator: `creator_type` and either `first_name` + `last_name` or `name`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::base::{bounded, bounded_opt, limits};

/// A creator in the seed's shape (`$defs/creator`): `creator_type` with `first_name` and
/// `last_name`, or `name` alone. Which of the two forms is checked by [`Creator::check`], so a
/// mistake names the exact field (`creators[2].last_name`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("oneOf" = [{ "required": ["first_name", "last_name"] }, { "required": ["name"] }]))]
pub struct Creator {
    /// author, editor, contributor, …
    #[serde(deserialize_with = "bounded::<{ limits::TYPE_NAME }, _>")]
    #[schemars(length(max = limits::TYPE_NAME))]
    pub creator_type: String,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "bounded_opt::<{ limits::CREATOR_NAME }, _>"
    )]
    #[schemars(length(max = limits::CREATOR_NAME))]
    #[allow(missing_docs)]
    // a `///` here would be published in every creator's schema; the name says it
    pub first_name: Option<String>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "bounded_opt::<{ limits::CREATOR_NAME }, _>"
    )]
    #[schemars(length(max = limits::CREATOR_NAME))]
    #[allow(missing_docs)]
    // a `///` here would be published in every creator's schema; the name says it
    pub last_name: Option<String>,
    /// One-field name (organisations)
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "bounded_opt::<{ limits::CREATOR_NAME }, _>"
    )]
    #[schemars(length(max = limits::CREATOR_NAME))]
    pub name: Option<String>,
}

impl Creator {
    /// The oneOf of the seed, with trimmed parts. On failure: the field (relative to the
    /// creator) and what to send instead.
    pub fn check(&self) -> Result<zotero_api::model::Creator, (&'static str, String)> {
        let trim = |s: &Option<String>| s.as_deref().map(|s| s.trim().to_string());
        let creator_type = self.creator_type.trim().to_string();
        if creator_type.is_empty() {
            return Err((
                "creator_type",
                "must name the creator's role, e.g. author or editor".into(),
            ));
        }
        match (trim(&self.first_name), trim(&self.last_name), trim(&self.name)) {
            (None, None, Some(name)) if !name.is_empty() => Ok(zotero_api::model::Creator {
                creator_type,
                first_name: None,
                last_name: None,
                name: Some(name),
            }),
            (None, None, Some(_)) => Err((
                "name",
                "must not be empty; give a single-field name such as CERN, or first_name and last_name instead".into(),
            )),
            (first, _, Some(_)) => Err((
                if first.is_some() { "first_name" } else { "last_name" },
                "cannot go with name: give name alone for a single-field name (an organisation), or first_name and last_name".into(),
            )),
            (Some(first), Some(last), None) if !last.is_empty() => {
                Ok(zotero_api::model::Creator {
                    creator_type,
                    first_name: Some(first),
                    last_name: Some(last),
                    name: None,
                })
            }
            (None, None, None) => Err((
                "last_name",
                "is required: give first_name and last_name, or name alone for a single-field name".into(),
            )),
            (None, Some(_), None) => Err((
                "first_name",
                "is required with last_name (it may be \"\"); or give name alone for a single-field name".into(),
            )),
            (Some(_), _, None) => Err((
                "last_name",
                "is required (not empty) with first_name; or give name alone for a single-field name".into(),
            )),
        }
    }
}

impl From<zotero_api::model::Creator> for Creator {
    fn from(c: zotero_api::model::Creator) -> Self {
        Self {
            creator_type: c.creator_type,
            first_name: c.first_name,
            last_name: c.last_name,
            name: c.name,
        }
    }
}
