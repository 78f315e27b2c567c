//! The MCP tools. Each is a type implementing [`ZoteroTool`] in a file of its own: its
//! `Params` (what it takes, deserialized and checked), its `Data` (what it answers) and a
//! `run` that calls the Zotero client. Schemas, hints and dispatch all come from those, and
//! `tools!` lists every tool once, so a tool cannot be listed but not callable (or the
//! reverse).

#![deny(missing_docs)]

pub mod cite;
pub mod collections;
pub mod files;
pub mod identify;
pub mod index;
pub mod items;
pub mod notes;
pub mod params;
pub mod research;
pub mod support;
pub mod tags;

pub mod tool;

use serde_json::{Map, Value};

use crate::error::ToolError;
pub use tool::{Definition, Hints, ToolContext, ToolSet, ZoteroTool};

fn definition<T: ZoteroTool>() -> Definition {
    Definition {
        name: T::NAME,
        title: T::TITLE,
        description: T::DESCRIPTION,
        input_schema: support::publish::input_schema::<T::Params>(),
        output_schema: support::publish::output_schema(support::publish::data_schema::<T::Data>()),
        hints: T::HINTS,
    }
}

/// The arguments as `T`'s `Params`, having passed serde's checks and `T::validate`.
pub fn checked<T: ZoteroTool>(args: Option<Map<String, Value>>) -> Result<T::Params, ToolError> {
    let params = support::parse::arguments::<T::Params>(args)?;
    T::validate(&params)?;
    Ok(params)
}

/// Typed `Params` → `T::validate` → `run` → the typed `Data`: how the server's own readers
/// (resources, completions) call a tool, with the checks a client's call gets, and reading
/// the answer by its fields, so that a renamed output field fails to compile there.
pub async fn run<T: ZoteroTool>(
    params: T::Params,
    ctx: &ToolContext,
) -> Result<T::Data, ToolError> {
    T::validate(&params)?;
    T::run(params, ctx).await
}

/// Arguments → checked `Params` → `run` → the `data` JSON. Nothing reaches Zotero before the
/// arguments passed both checks.
async fn call<T: ZoteroTool>(
    ctx: &ToolContext,
    args: Option<Map<String, Value>>,
) -> Result<Value, ToolError> {
    let params = checked::<T>(args)?;
    let data = T::run(params, ctx).await?;
    serde_json::to_value(data)
        .map_err(|e| ToolError::internal(format!("{} could not write its answer: {e}", T::NAME)))
}

/// The one table of tools: yields [`ToolName`] (in this order, the seed's), and from each
/// tool type its name, set, hints, definition and dispatch.
macro_rules! tools {
    ($($variant:ident => $tool:ty,)+) => {
        /// Every tool, so that dispatch is checked by the compiler.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[allow(missing_docs)] // One variant per tool of the table, named as its type.
        pub enum ToolName {
            $($variant,)+
        }

        impl ToolName {
            /// In the seed's order, which is the order of `tools/list`.
            pub const ALL: &'static [ToolName] = &[$(ToolName::$variant,)+];

            /// The name clients call it by.
            pub fn name(self) -> &'static str {
                match self {
                    $(ToolName::$variant => <$tool as ZoteroTool>::NAME,)+
                }
            }

            /// The set `ZOTERO_TOOLSETS` picks it by.
            pub fn set(self) -> ToolSet {
                match self {
                    $(ToolName::$variant => <$tool as ZoteroTool>::SET,)+
                }
            }

            /// What it may do, as MCP annotations.
            pub fn hints(self) -> Hints {
                match self {
                    $(ToolName::$variant => <$tool as ZoteroTool>::HINTS,)+
                }
            }

            /// The tool as `tools/list` publishes it.
            pub fn definition(self) -> Definition {
                match self {
                    $(ToolName::$variant => definition::<$tool>(),)+
                }
            }

            /// Calls it with a client's arguments and answers its `data` as JSON.
            pub async fn call(
                self,
                ctx: &ToolContext,
                args: Option<Map<String, Value>>,
            ) -> Result<Value, ToolError> {
                match self {
                    $(ToolName::$variant => call::<$tool>(ctx, args).await,)+
                }
            }
        }
    };
}

tools! {
    SearchItems => items::search_items::SearchItems,
    ListCollections => collections::list_collections::ListCollections,
    GetItem => items::get_item::GetItem,
    CreateItem => items::create_item::CreateItem,
    UploadAttachment => files::upload_attachment::UploadAttachment,
    AttachArxivPdf => files::attach_arxiv_pdf::AttachArxivPdf,
    GetSortValues => items::get_sort_values::GetSortValues,
    AddItemToCollection => collections::add_item_to_collection::AddItemToCollection,
    ListLibraries => items::list_libraries::ListLibraries,
    ListItems => items::list_items::ListItems,
    ListTags => tags::list_tags::ListTags,
    GetItemFulltext => files::get_item_fulltext::GetItemFulltext,
    GetItemMetadata => items::get_item_metadata::GetItemMetadata,
    Cite => cite::format::Cite,
    Export => cite::export::Export,
    GetItemChildren => items::get_item_children::GetItemChildren,
    GetNotes => notes::get_notes::GetNotes,
    GetAnnotations => notes::get_annotations::GetAnnotations,
    UpdateItem => items::update_item::UpdateItem,
    TrashItems => items::trash_items::TrashItems,
    CreateNote => notes::create_note::CreateNote,
    UpdateNote => notes::update_note::UpdateNote,
    RemoveItemFromCollection => collections::remove_item_from_collection::RemoveItemFromCollection,
    ManageTags => tags::manage_tags::ManageTags,
    CreateCollection => collections::create_collection::CreateCollection,
    UpdateCollection => collections::update_collection::UpdateCollection,
    AddByIdentifier => identify::add_by_identifier::AddByIdentifier,
    SemanticSearch => index::semantic_search::SemanticSearch,
    SearchDatabaseStatus => index::search_database_status::SearchDatabaseStatus,
    UpdateSearchDatabase => index::update_search_database::UpdateSearchDatabase,
    CheckManuscript => research::check_manuscript::CheckManuscript,
    CheckRetractions => research::check_retractions::CheckRetractions,
    FindRelated => research::find_related::FindRelated,
    CreateAnnotation => notes::create_annotation::CreateAnnotation,
}

impl ToolName {
    /// The tool called `name`, if there is one.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|t| t.name() == name)
    }

    /// Writes to the library (left out in read-only mode). The index set's tools write
    /// only the local search index, never Zotero, so read-only mode and the desktop's
    /// read-only local API keep them.
    pub fn writes(self) -> bool {
        !self.hints().read_only && self.set() != ToolSet::Index
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check<T: ZoteroTool>(args: Value) -> Result<T::Params, String> {
        checked::<T>(args.as_object().cloned()).map_err(|e| {
            let field = e.details["field"].as_str().unwrap_or_default().to_string();
            assert!(
                e.message.contains(&field) || field.is_empty(),
                "{}",
                e.message
            );
            field
        })
    }

    #[test]
    fn cross_field_checks_name_the_field() {
        use collections::add_item_to_collection::AddItemToCollection as Add;
        use files::upload_attachment::UploadAttachment as Upload;
        use items::create_item::CreateItem as Create;
        use items::search_items::SearchItems as Search;
        let key = "X42A7DEE";
        assert_eq!(
            check::<Search>(json!({"query": "x", "start": 1, "offset": 2})).unwrap_err(),
            "offset"
        );
        assert_eq!(check::<Search>(json!({"query": " "})).unwrap_err(), "query");
        assert!(check::<Search>(json!({"query": "x", "offset": 2, "limit": null})).is_ok());
        assert_eq!(
            check::<Upload>(json!({"item_key": key})).unwrap_err(),
            "file_path"
        );
        assert_eq!(
            check::<Upload>(json!({"item_key": key, "file_path": "/a", "file_url": "https://x"}))
                .unwrap_err(),
            "file_url"
        );
        assert_eq!(
            check::<Upload>(json!({"item_key": key, "file_bytes_base64": "aGk="})).unwrap_err(),
            "filename"
        );
        assert!(check::<Upload>(
            json!({"item_key": key, "file_bytes_base64": "aGk=", "filename": "a.txt"})
        )
        .is_ok());
        assert_eq!(
            check::<Add>(json!({"item_key": key})).unwrap_err(),
            "collection_key"
        );
        assert_eq!(
            check::<Add>(json!({"item_key": key, "collection_key": key, "collection_name": "x"}))
                .unwrap_err(),
            "collection_key"
        );
        assert_eq!(
            check::<Add>(json!({"item_key": key, "collection_name": " "})).unwrap_err(),
            "collection_name"
        );
        assert_eq!(
            check::<Create>(json!({"item_type": "note", "title": "x"})).unwrap_err(),
            "item_type"
        );
        assert_eq!(
            check::<notes::create_note::CreateNote>(
                json!({"content": "x", "parent_key": key, "collection_key": key})
            )
            .unwrap_err(),
            "collection_key"
        );
        assert!(check::<notes::create_note::CreateNote>(
            json!({"content": "x", "collection_key": key})
        )
        .is_ok());
        assert_eq!(
            check::<Create>(json!({"item_type": "book", "title": "x", "creators": [
                {"creator_type": "author", "name": "CERN"},
                {"creator_type": "editor", "first_name": "Ada", "name": "Lovelace"}
            ]}))
            .unwrap_err(),
            "creators[1].first_name"
        );
    }

    #[test]
    fn names_are_unique_and_prefixed() {
        let mut names: Vec<&str> = ToolName::ALL.iter().map(|t| t.name()).collect();
        assert!(names.iter().all(|n| n.starts_with("zotero_")));
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), ToolName::ALL.len());
        for t in ToolName::ALL {
            assert_eq!(ToolName::from_name(t.name()), Some(*t));
        }
    }

    #[test]
    fn sets_agree_with_hints() {
        for t in ToolName::ALL {
            let h = t.hints();
            // Read-only mode leaves out tools by their hints; the sets must say the same.
            match t.set() {
                ToolSet::Read => assert!(h.read_only, "{}", t.name()),
                ToolSet::Write | ToolSet::Files => assert!(!h.read_only, "{}", t.name()),
                _ => {}
            }
            // Only a tool that writes may change or remove what is there.
            assert!(!h.destructive || t.set() == ToolSet::Write, "{}", t.name());
        }
    }

    #[test]
    fn set_names_round_trip() {
        for s in ToolSet::ALL {
            assert_eq!(ToolSet::from_name(s.name()), Some(s));
            assert_eq!(ToolSet::from_name(&s.name().to_uppercase()), Some(s));
        }
        assert_eq!(ToolSet::from_name("reads"), None);
    }
}
