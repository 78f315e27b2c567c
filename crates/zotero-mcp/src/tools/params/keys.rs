//! Keys and libraries as tool arguments: an object key, a library, an arXiv id.

use std::borrow::Cow;
use std::fmt;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize};
use zotero_sources::ArxivId;

use super::base::{check_len, inline_schema, limits};
use crate::text::quote;

// ---------------------------------------------------------------------------------------
// Keys
// ---------------------------------------------------------------------------------------

/// A Zotero object key (item, collection) as a tool argument: zotero-api's [`Key`], which
/// only a checked string can become, so nothing that could change a request's path ever
/// reaches a URL.
///
/// [`Key`]: zotero_api::ObjectKey
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct ObjectKey(#[serde(serialize_with = "key_text")] zotero_api::ObjectKey);

fn key_text<S: serde::Serializer>(k: &zotero_api::ObjectKey, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(k.as_str())
}

impl ObjectKey {
    /// The key, or what it must be.
    pub fn parse(key: &str) -> Result<Self, NotAKey> {
        zotero_api::ObjectKey::parse(key).map(Self).map_err(NotAKey)
    }

    /// The key as text.
    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }

    /// The checked key, for the client.
    pub fn key(&self) -> &zotero_api::ObjectKey {
        &self.0
    }
}

/// A value that is not an object key, with what a key must be.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("must be {0}")]
pub struct NotAKey(zotero_api::InvalidKey);

impl From<zotero_api::ObjectKey> for ObjectKey {
    fn from(k: zotero_api::ObjectKey) -> Self {
        Self(k)
    }
}

impl fmt::Display for ObjectKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ObjectKey {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        ObjectKey::parse(&s).map_err(de::Error::custom)
    }
}

// The seed's `minLength: 1`, and the exact form, so a client can check a key before sending.
inline_schema!(ObjectKey, "ObjectKey", {
    "type": "string",
    "minLength": 1,
    "maxLength": 8,
    "pattern": "^[23456789A-HJ-NP-Z]{8}$"
});

// ---------------------------------------------------------------------------------------
// Libraries
// ---------------------------------------------------------------------------------------

/// Which library a call is about: `user` (the key's own) or `group:<groupID>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LibraryParam(pub zotero_api::LibraryRef);

impl<'de> Deserialize<'de> for LibraryParam {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map(LibraryParam).map_err(|_| {
            de::Error::custom(format!(
                "must be \"user\" or \"group:<groupID>\" (zotero_list_libraries lists them), got '{}'",
                quote(&s)
            ))
        })
    }
}

inline_schema!(LibraryParam, "Library", {
    "type": "string",
    "maxLength": 25,
    "pattern": "^(user|group:[1-9][0-9]{0,18})$"
});

/// The library a call names, if it names one.
pub fn library(p: Option<LibraryParam>) -> Option<zotero_api::LibraryRef> {
    p.map(|l| l.0)
}

/// An arXiv paper, by identifier or URL (`1706.03762v1`, `hep-th/9901001`, `arXiv:…`,
/// `https://arxiv.org/abs/…`).
#[derive(Debug, Clone)]
pub struct Arxiv(pub ArxivId);

impl<'de> Deserialize<'de> for Arxiv {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        check_len(&s, limits::ARXIV, false).map_err(de::Error::custom)?;
        ArxivId::parse(&s)
            .map(Self)
            .map_err(|e| de::Error::custom(format!("must be an arXiv id or URL: {e}")))
    }
}

inline_schema!(Arxiv, "Arxiv", { "type": "string", "minLength": 1, "maxLength": limits::ARXIV });
