//! Where a write goes, and what the process last learnt of the desktop: the types the client,
//! its routing and the local-API writes share, kept below all three so none imports another for them.

use std::sync::Mutex;

use crate::config::ApiKey;

/// Where a write (and every read it depends on) goes.
#[derive(Debug, Clone)]
pub enum WriteRoute {
    Web,
    Local { server_id: String, key: ApiKey },
}

/// The desktop's write state of one process: the server ID last seen.
#[derive(Default)]
pub(crate) struct LocalWriteState {
    server_id: Mutex<Option<String>>,
}

impl LocalWriteState {
    pub(crate) fn get(&self) -> Option<String> {
        zotero_net::lock(&self.server_id).clone()
    }
    pub(crate) fn set(&self, id: Option<String>) {
        *zotero_net::lock(&self.server_id) = id;
    }
}
