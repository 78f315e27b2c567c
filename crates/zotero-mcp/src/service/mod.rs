//! The service layer the tools call: the Zotero client, the upload sources and the defaults
//! of this server, which library a call is about, and the workflows several tools share
//! (attaching a file). Below it nothing knows MCP; above it a tool is its parameters, one
//! call here and its answer.

pub mod annotations;
pub mod collections;
pub mod edit;
pub mod fulltext;
pub mod identify;
pub mod index;
pub mod items;
pub mod notes;
pub mod research;
pub mod time;

use std::sync::Arc;

use tokio_util::sync::CancellationToken;
use zotero_api::upload::{AttachmentPlan, FileToUpload, NewAttachment, ProgressFn, Uploaded};
use zotero_api::{Library, LibraryRef, ObjectKey, ZoteroClient};
use zotero_sources::{Fetcher, PrepareOptions, PreparedFile, SourceSpec};

use crate::config::Config;
use crate::error::ToolError;

/// Why the service could not be set up at start: the part that failed and why, so the user
/// knows which setting to change.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error("cannot build the Zotero client: {0}")]
    Client(zotero_api::ZoteroError),
    #[error("cannot read Zotero's database: {0}")]
    Database(zotero_db::DbError),
    #[error("cannot build the file fetcher: {0}")]
    Fetcher(zotero_sources::SourceError),
    #[error("cannot build the metadata client: {0}")]
    Metadata(zotero_metadata::services::ServicesSetupError),
}

pub struct ZoteroService {
    pub client: ZoteroClient,
    /// Fetches upload sources (`file_url`, arXiv) and reads local files.
    pub fetcher: Fetcher,
    /// `{arxiv_base}/pdf/<id>` is where arXiv PDFs come from.
    pub arxiv_base: String,
    /// The library of a call that names none (`ZOTERO_LIBRARY`).
    pub default_library: LibraryRef,
    /// DOI, Crossref, DataCite, arXiv's API, Open Library, NCBI, Unpaywall: one client and
    /// one pace per service for the whole process.
    pub metadata: zotero_metadata::services::MetadataServices,
    /// The search index: where it lives and the sentence encoder, if one is loaded.
    pub search: crate::service::index::SearchSettings,
    /// How attachments' files are read for their text.
    pub text: crate::config::TextConfig,
    /// Extracted documents on disk (in the index directory, when there is one).
    pub file_cache: Option<fulltext::cache::DocCache>,
    /// The only directories a linked file is read from (`ZOTERO_UPLOAD_ROOTS`).
    pub linked_roots: Vec<std::path::PathBuf>,
    /// Where annotations take attachments' text and glyph boxes from instead of their files
    /// (tests); `None`: the files themselves.
    pub documents: Option<Arc<dyn annotations::DocumentSource>>,
}

impl ZoteroService {
    /// The service for this configuration; an error says what could not be set up.
    pub fn new(config: &Config) -> Result<Self, SetupError> {
        Self::with_encoder(config, None)
    }

    /// [`ZoteroService::new`] with a sentence encoder for search by meaning: the hook the
    /// model crate plugs into (and tests, with `zotero_index::SynonymEncoder`).
    pub fn with_encoder(
        config: &Config,
        encoder: crate::service::index::SharedEncoder,
    ) -> Result<Self, SetupError> {
        let file_cache = config
            .index
            .dir
            .as_ref()
            .ok()
            .map(|dir| fulltext::cache::DocCache::new(dir, config.text.cache_max_bytes));
        let files = crate::service::index::IndexFiles {
            reader: fulltext::FileReader {
                extract: config.text.extract,
                max_file_bytes: config.text.max_file_bytes,
                linked_roots: config.uploads.roots.clone(),
                cache: file_cache.clone(),
            },
            download: config.index.download_files,
        };
        Ok(Self {
            text: config.text.clone(),
            file_cache,
            linked_roots: config.uploads.roots.clone(),
            search: crate::service::index::SearchSettings::new(
                config.index.dir.clone(),
                encoder,
                config.index.embedding_model.clone(),
                config.index.embedding.clone(),
                files,
            ),
            client: client(config)?,
            fetcher: Fetcher::new(&config.sources()).map_err(SetupError::Fetcher)?,
            arxiv_base: config.uploads.arxiv_base.clone(),
            default_library: config.zotero.library,
            metadata: zotero_metadata::services::MetadataServices::new(config.metadata())
                .map_err(SetupError::Metadata)?,
            documents: None,
        })
    }

    /// The library a call is about: the one it names, or the default.
    pub fn library(&self, named: Option<LibraryRef>) -> Result<Library<'_>, ToolError> {
        Ok(self.client.library(named.unwrap_or(self.default_library))?)
    }

    /// Attaches a file to `parent`: checks the parent and prepares the bytes (nothing is
    /// written before both succeeded), then runs the upload, which leaves nothing behind
    /// when it fails.
    pub async fn attach(
        &self,
        library: Library<'_>,
        parent: &ObjectKey,
        title: Option<&str>,
        source: (SourceSpec, PrepareOptions),
        progress: Option<ProgressFn>,
        cancel: &CancellationToken,
    ) -> Result<Uploaded, ToolError> {
        let file = self.prepare(&library, parent, source, cancel).await?;
        let new = NewAttachment {
            parent_key: parent,
            title,
            file: &file,
        };
        Ok(library.upload_attachment(new, progress, cancel).await?)
    }

    /// What [`ZoteroService::attach`] would do (a dry run): the same checks of the parent
    /// and of the file (read or downloaded, size limit, MD5), then what would be written;
    /// nothing is.
    pub async fn plan_attach(
        &self,
        library: Library<'_>,
        parent: &ObjectKey,
        title: Option<&str>,
        source: (SourceSpec, PrepareOptions),
        cancel: &CancellationToken,
    ) -> Result<AttachmentPlan, ToolError> {
        let file = self.prepare(&library, parent, source, cancel).await?;
        let new = NewAttachment {
            parent_key: parent,
            title,
            file: &file,
        };
        Ok(library.plan_attachment(&new, cancel).await?)
    }

    /// Checks that `parent` can take an attachment, then reads or fetches the file.
    async fn prepare(
        &self,
        library: &Library<'_>,
        parent: &ObjectKey,
        source: (SourceSpec, PrepareOptions),
        cancel: &CancellationToken,
    ) -> Result<FileToUpload, ToolError> {
        library.check_parent(parent, cancel).await?;
        let (spec, options) = source;
        let prepared = self.fetcher.prepare(spec, options, cancel).await?;
        Ok(to_upload(prepared))
    }
}

/// What an index update reads Zotero with (`service::index::SharedClient`).
impl AsRef<ZoteroClient> for ZoteroService {
    fn as_ref(&self) -> &ZoteroClient {
        &self.client
    }
}

/// The shared handle the server keeps.
pub type Service = Arc<ZoteroService>;

fn to_upload(prepared: PreparedFile) -> FileToUpload {
    let prepared = Arc::new(prepared);
    let source = prepared.clone();
    FileToUpload {
        filename: prepared.filename.clone(),
        content_type: prepared.content_type.clone(),
        size: prepared.size,
        md5: prepared.md5.clone(),
        mtime_ms: prepared.mtime_ms,
        open: Box::new(move || Ok(source.stream())),
    }
}

/// The Zotero client, with Zotero's own database when it is configured (opened now, so a
/// missing, foreign or too new database stops the server at start with the reason).
pub fn client(config: &Config) -> Result<ZoteroClient, SetupError> {
    let client = ZoteroClient::new(&config.client()).map_err(SetupError::Client)?;
    match &config.database {
        None => Ok(client),
        Some(database) => {
            let db = database.open().map_err(SetupError::Database)?;
            Ok(client.with_database(std::sync::Arc::new(db)))
        }
    }
}
