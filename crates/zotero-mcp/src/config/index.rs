//! The configured sentence model of the search index. Here, below the index sync, so that
//! the configuration does not import the service.

use zotero_hub::{HubConfig, ModelSpec};

/// The configured sentence model and where it comes from.
#[derive(Clone)]
pub struct ModelSource {
    pub spec: ModelSpec,
    pub hub: HubConfig,
}

impl std::fmt::Debug for ModelSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // HubConfig's own Debug hides the token.
        f.debug_struct("ModelSource")
            .field("spec", &self.spec)
            .field("hub", &self.hub)
            .finish()
    }
}
