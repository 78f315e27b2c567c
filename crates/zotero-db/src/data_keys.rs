//! The keys of an item's `data` that are not item fields (not `itemData`): one list for the
//! fixture's mirror, the fields an update may set (zotero-api re-exports it in `model`) and
//! the metadata answer above. Taken from Zotero's own `Zotero.Item.prototype.toJSON` and
//! `fromJSON` (`chrome/content/zotero/xpcom/data/item.js`) and the dataserver's item
//! validation (`model/Items.inc.php`); every other key they write is a field.

/// What a key of an item's `data` that is not a field is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotField {
    /// The object itself: `key`, `version`, `itemType`, `parentItem`, `dateAdded`,
    /// `dateModified`.
    Object,
    /// Its lists: `creators`, `tags`, `collections`, `relations`.
    List,
    /// Its flags, which Zotero sets together (`deleted`: in the trash; `inPublications`).
    Flag,
    /// A note's text, or an attachment's note: `note`.
    Note,
    /// An attachment's link and file: `linkMode`, `contentType`, `charset`, `filename`,
    /// `md5`, `mtime`, `path`, `lastRead`.
    Attachment,
    /// An annotation's properties (`annotationType`, `annotationText`, …).
    Annotation,
}

/// Every key of an item's `data` that is not a field, with what it is about, in the order
/// `toJSON` writes them.
pub const NOT_FIELDS: [(&str, NotField); 29] = [
    ("key", NotField::Object),
    ("version", NotField::Object),
    ("itemType", NotField::Object),
    ("creators", NotField::List),
    ("parentItem", NotField::Object),
    ("linkMode", NotField::Attachment),
    ("contentType", NotField::Attachment),
    ("charset", NotField::Attachment),
    ("path", NotField::Attachment),
    ("filename", NotField::Attachment),
    ("lastRead", NotField::Attachment),
    ("mtime", NotField::Attachment),
    ("md5", NotField::Attachment),
    ("note", NotField::Note),
    ("annotationType", NotField::Annotation),
    ("annotationAuthorName", NotField::Annotation),
    ("annotationText", NotField::Annotation),
    ("annotationComment", NotField::Annotation),
    ("annotationColor", NotField::Annotation),
    ("annotationPageLabel", NotField::Annotation),
    ("annotationSortIndex", NotField::Annotation),
    ("annotationPosition", NotField::Annotation),
    ("tags", NotField::List),
    ("collections", NotField::List),
    ("relations", NotField::List),
    ("inPublications", NotField::Flag),
    ("deleted", NotField::Flag),
    ("dateAdded", NotField::Object),
    ("dateModified", NotField::Object),
];

/// What `key` of an item's `data` is about when it is not a field; `None` for a field.
/// Zotero names every annotation property `annotation…` and no field so, so one it adds
/// later is not taken for a field either.
pub fn not_field(key: &str) -> Option<NotField> {
    NOT_FIELDS
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, kind)| *kind)
        .or_else(|| {
            key.starts_with("annotation")
                .then_some(NotField::Annotation)
        })
}

/// Whether `key` of an item's `data` is an item field (`title`, `DOI`, `extra`, …).
pub fn is_field(key: &str) -> bool {
    not_field(key).is_none()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_told_from_the_items_other_keys() {
        for field in [
            "title",
            "DOI",
            "extra",
            "accessDate",
            "url",
            "abstractNote",
            "date",
        ] {
            assert!(is_field(field), "{field}");
        }
        assert_eq!(not_field("parentItem"), Some(NotField::Object));
        assert_eq!(not_field("relations"), Some(NotField::List));
        assert_eq!(not_field("deleted"), Some(NotField::Flag));
        assert_eq!(not_field("note"), Some(NotField::Note));
        assert_eq!(not_field("lastRead"), Some(NotField::Attachment));
        assert_eq!(not_field("annotationColor"), Some(NotField::Annotation));
        assert_eq!(
            not_field("annotationIsExternal"),
            Some(NotField::Annotation)
        );
    }

    #[test]
    fn an_attachment_templates_fields_are_its_title_access_date_and_url() {
        // `/items/new?itemType=attachment&linkMode=imported_url`, keys in the web API's order.
        let template = [
            "itemType",
            "linkMode",
            "title",
            "accessDate",
            "url",
            "note",
            "tags",
            "collections",
            "relations",
            "contentType",
            "charset",
            "filename",
            "md5",
            "mtime",
        ];
        let fields: Vec<&str> = template.into_iter().filter(|k| is_field(k)).collect();
        assert_eq!(fields, ["title", "accessDate", "url"]);
    }

    #[test]
    fn each_key_is_listed_once() {
        let mut keys: Vec<&str> = NOT_FIELDS.iter().map(|(k, _)| *k).collect();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), NOT_FIELDS.len());
    }
}
