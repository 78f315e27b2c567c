//! Item templates (`GET /items/new`) and item types (`GET /itemTypes`), fetched from the Web
//! API once per process: they change only with Zotero's schema.

use std::collections::HashMap;
use std::sync::Mutex;

use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;
use zotero_net::lock;

use crate::error::ZoteroError;
use crate::http::{ApiRequest, HttpClient};
use crate::response::{encode_query, parse_json, unexpected};

/// Templates and item types, fetched once per process.
#[derive(Default)]
pub struct TemplateCache {
    templates: Mutex<HashMap<String, Map<String, Value>>>,
    item_types: Mutex<Option<Vec<String>>>,
}

impl TemplateCache {
    /// Every item type Zotero knows (`GET /itemTypes`), once per process.
    pub async fn item_types(
        &self,
        web: &HttpClient,
        cancel: &CancellationToken,
    ) -> Result<Vec<String>, ZoteroError> {
        if let Some(types) = lock(&self.item_types).clone() {
            return Ok(types);
        }
        let resp = web.send(&ApiRequest::get("/itemTypes"), cancel).await?;
        if resp.status != 200 {
            return Err(unexpected(&resp, "list the item types"));
        }
        let list: Vec<Value> = parse_json(&resp)?;
        let types: Vec<String> = list
            .iter()
            .filter_map(|t| t.get("itemType").and_then(Value::as_str))
            .map(str::to_string)
            .collect();
        *lock(&self.item_types) = Some(types.clone());
        Ok(types)
    }

    /// The empty JSON of a new item (`GET /items/new`), once per type and link mode.
    pub async fn template(
        &self,
        web: &HttpClient,
        item_type: &str,
        link_mode: Option<&str>,
        cancel: &CancellationToken,
    ) -> Result<Map<String, Value>, ZoteroError> {
        let cache_key = format!("{item_type}/{}", link_mode.unwrap_or(""));
        if let Some(t) = lock(&self.templates).get(&cache_key) {
            return Ok(t.clone());
        }
        let mut query = vec![("itemType", item_type)];
        if let Some(mode) = link_mode {
            query.push(("linkMode", mode));
        }
        let path = format!("/items/new?{}", encode_query(&query));
        let resp = web.send(&ApiRequest::get(path), cancel).await?;
        match resp.status {
            200 => {}
            400 => {
                let mut valid = self.item_types(web, cancel).await?;
                if valid.iter().any(|t| t == item_type) {
                    return Err(unexpected(&resp, "fetch the item template"));
                }
                valid.sort();
                return Err(ZoteroError::UnknownItemType {
                    item_type: item_type.to_string(),
                    valid,
                });
            }
            _ => return Err(unexpected(&resp, "fetch the item template")),
        }
        let template: Map<String, Value> = parse_json(&resp)?;
        lock(&self.templates).insert(cache_key, template.clone());
        Ok(template)
    }
}
