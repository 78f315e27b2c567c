//! Reading the objects an edit applies to, and which fields an item update may set.

use std::collections::HashMap;

use tokio_util::sync::CancellationToken;

use super::{ObjectKind, WRITE_BATCH};
use crate::client::Library;
use crate::error::ZoteroError;
use crate::http::ApiRequest;
use crate::library::ObjectKey;
use crate::model::{is_field, WireObject};
use crate::response::{encode_query, parse_json, unexpected};

impl Library<'_> {
    /// The fields an update may set on an item of this type (and link mode, for an
    /// attachment), from its template: its keys that are fields ([`is_field`]); the type,
    /// the lists that have their own arguments, the parent, an attachment's file and link and
    /// a note's text are not.
    pub async fn settable_fields(
        &self,
        item_type: &str,
        link_mode: Option<&str>,
        cancel: &CancellationToken,
    ) -> Result<Vec<String>, ZoteroError> {
        let template = self.client.template(item_type, link_mode, cancel).await?;
        Ok(template.keys().filter(|k| is_field(k)).cloned().collect())
    }

    /// Reads these objects as they are now (never from a cache), trashed ones included,
    /// 50 keys a request. Keys not in the answer do not exist.
    pub async fn read_objects(
        &self,
        kind: ObjectKind,
        keys: &[ObjectKey],
        cancel: &CancellationToken,
    ) -> Result<HashMap<String, WireObject>, ZoteroError> {
        let mut found = HashMap::new();
        for chunk in keys.chunks(WRITE_BATCH) {
            let list: Vec<&str> = chunk.iter().map(ObjectKey::as_str).collect();
            let joined = list.join(",");
            let query = encode_query(&[
                (kind.key_param(), &joined),
                ("includeTrashed", "1"),
                ("limit", "100"),
            ]);
            let req = ApiRequest::get(format!("{}?{query}", kind.path())).fresh();
            let resp = self.send(&req, cancel).await?;
            if resp.status != 200 {
                return Err(unexpected(&resp, &format!("read {}s", kind.noun())));
            }
            let objects: Vec<WireObject> = parse_json(&resp)?;
            for o in objects {
                if let Some(key) = o.key.clone() {
                    found.insert(key, o);
                }
            }
        }
        Ok(found)
    }
}
