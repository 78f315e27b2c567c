//! One item's metadata as readable Markdown (`zotero_get_item_metadata` with
//! `format: "markdown"`): the title as a heading, the creators by role, every field with its
//! English label, tags, collections, relations and links, then the abstract.
//!
//! Everything taken from the item is written through `crate::notes::markdown`'s escaping (text) and
//! `link_to` (links): a title, field, name, tag or abstract that holds HTML, an entity, a
//! `javascript:` link or an autolink is shown as written, never as markup.

use crate::notes::markdown::{code_span, escape_lines, escape_text as escape, link_to};
use crate::tools::items::metadata::{ItemMetadata, ItemRetraction};

/// Fields shown first, in this order (a reader looks for these); the rest follow by name.
const FIRST: &[&str] = &[
    "date",
    "publicationTitle",
    "proceedingsTitle",
    "bookTitle",
    "websiteTitle",
    "conferenceName",
    "volume",
    "issue",
    "pages",
    "edition",
    "series",
    "publisher",
    "place",
    "university",
    "institution",
    "DOI",
    "ISBN",
    "ISSN",
    "url",
];

/// Fields with a place of their own below the list.
const ELSEWHERE: &[&str] = &["title", "abstractNote", "note"];

/// Labels Zotero shows that the field's name does not spell out.
fn label(field: &str) -> String {
    let known = match field {
        "publicationTitle" => "Publication",
        "abstractNote" => "Abstract",
        "url" => "URL",
        "DOI" => "DOI",
        "ISBN" => "ISBN",
        "ISSN" => "ISSN",
        "accessDate" => "Accessed",
        "libraryCatalog" => "Library Catalog",
        "extra" => "Extra",
        "numPages" => "# of Pages",
        "shortTitle" => "Short Title",
        "journalAbbreviation" => "Journal Abbr",
        "place" => "Place",
        "seriesNumber" => "Series Number",
        _ => "",
    };
    if known.is_empty() {
        humanize(field)
    } else {
        known.to_string()
    }
}

/// The warning a retracted item opens with: Zotero's flag, its date, reasons and notice.
fn retraction_warning(r: &ItemRetraction) -> String {
    let mut w = String::from("> **Warning: retracted.** Zotero flags this item as retracted");
    if let Some(date) = &r.date {
        w.push_str(&format!(" ({})", escape(date)));
    }
    if !r.reasons.is_empty() {
        let reasons: Vec<String> = r.reasons.iter().map(|x| escape(x)).collect();
        w.push_str(&format!(": {}", reasons.join("; ")));
    }
    w.push('.');
    if let Some(doi) = &r.notice_doi {
        let url = format!("https://doi.org/{doi}");
        w.push_str(&format!(" Notice: {}.", link_to(doi, &url)));
    }
    for url in r.urls.iter().filter(|u| {
        r.notice_doi
            .as_ref()
            .is_none_or(|d| !u.to_lowercase().contains(&d.to_lowercase()))
    }) {
        w.push_str(&format!(" {}", link_to("More", url)));
    }
    w.push_str("\n\n");
    w
}

/// `conferenceName` → `Conference Name`.
pub fn humanize(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if i == 0 {
            out.extend(c.to_uppercase());
        } else if c.is_uppercase() {
            out.push(' ');
            out.push(c);
        } else {
            out.push(c);
        }
    }
    out
}

/// The item as Markdown, with its links.
pub fn render(item: &ItemMetadata, zotero_url: &str, web_url: Option<&str>) -> String {
    let mut md = format!("# {}\n\n", escape(&item.title));
    if let Some(r) = &item.retraction {
        md.push_str(&retraction_warning(r));
    }
    // `name` and `value` are Markdown already: each caller escapes what it takes from the item.
    let mut line = |name: &str, value: &str| {
        md.push_str(&format!("- **{name}:** {value}\n"));
    };
    line("Item Type", &escape(&humanize(&item.item_type)));
    let mut roles: Vec<(String, Vec<String>)> = Vec::new();
    for c in &item.creators {
        let name = match (&c.name, &c.first_name, &c.last_name) {
            (Some(n), _, _) => n.clone(),
            (None, Some(f), Some(l)) if !f.is_empty() => format!("{f} {l}"),
            (None, _, Some(l)) => l.clone(),
            _ => continue,
        };
        match roles.iter_mut().find(|(r, _)| *r == c.creator_type) {
            Some((_, names)) => names.push(escape(&name)),
            None => roles.push((c.creator_type.clone(), vec![escape(&name)])),
        }
    }
    for (role, names) in &roles {
        let label = humanize(role);
        let label = if names.len() > 1 {
            format!("{label}s")
        } else {
            label
        };
        line(&escape(&label), &names.join("; "));
    }
    let rest = item
        .fields
        .keys()
        .filter(|k| !FIRST.contains(&k.as_str()) && !ELSEWHERE.contains(&k.as_str()));
    for name in FIRST
        .iter()
        .filter(|f| item.fields.contains_key(**f))
        .copied()
        .chain(rest.map(String::as_str))
    {
        if let Some(value) = item.fields.get(name) {
            line(&escape(&label(name)), &escape(value));
        }
    }
    if !item.tags.is_empty() {
        let tags: Vec<String> = item
            .tags
            .iter()
            .map(|t| {
                let auto = if t.tag_type == 1 { " (automatic)" } else { "" };
                format!("{}{auto}", code_span(&t.tag))
            })
            .collect();
        line("Tags", &tags.join(", "));
    }
    if !item.collections.is_empty() {
        let colls: Vec<String> = item
            .collections
            .iter()
            .map(|c| match &c.name {
                Some(n) => format!("{} ({})", escape(n), escape(&c.collection_key)),
                None => escape(&c.collection_key),
            })
            .collect();
        line("Collections", &colls.join(", "));
    }
    for (predicate, uris) in &item.relations {
        line(
            &format!("Related ({})", escape(predicate)),
            &escape(&uris.join(", ")),
        );
    }
    if let Some(parent) = &item.parent_item_key {
        line("Parent Item", &escape(parent));
    }
    if item.in_trash {
        line("Status", "in the trash");
    }
    if let Some(added) = &item.date_added {
        line("Date Added", &escape(added));
    }
    if let Some(modified) = &item.date_modified {
        line("Modified", &escape(modified));
    }
    let mut links = format!(
        "{} · {}",
        escape(&item.item_key),
        link_to("Open in Zotero", zotero_url)
    );
    if let Some(web) = web_url {
        links.push_str(&format!(" · {}", link_to("zotero.org", web)));
    }
    line("Item Key", &links);
    if item.fields.contains_key("note") {
        md.push_str("\n## Note\n\nThe note is HTML; zotero_get_notes renders it as Markdown.\n");
    }
    if let Some(abstract_note) = item.fields.get("abstractNote") {
        md.push_str(&format!(
            "\n## Abstract\n\n{}",
            escape_lines(abstract_note, "")
        ));
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_and_escapes() {
        assert_eq!(humanize("conferenceName"), "Conference Name");
        assert_eq!(label("publicationTitle"), "Publication");
        assert_eq!(escape("a*b_c [d]\ne"), "a\\*b\\_c \\[d\\] e");
    }
}
