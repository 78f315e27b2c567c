//! CSL-JSON → Zotero item, following `itemFromCSLJSON` of zotero/utilities
//! (`utilities_item.js`) with the mappings of the schema's `csl` section:
//!
//! - the item type is the first Zotero type `csl.types` lists for the CSL type, after the
//!   same special cases (`bill` with a publisher → `hearing`, `book` with a `version` →
//!   `computerProgram`, …); an unknown type gives `document`, a missing one `preprint`
//!   (CSL JSON.js defaults a missing type to `article`, for the DOI agencies' bad data);
//! - each CSL text variable goes to the first of its Zotero fields the item type has, a base
//!   field being replaced by the type's own field (`container-title` → `publicationTitle` →
//!   `bookTitle` for a `bookSection`); variables the type has no field for are dropped, as
//!   Zotero drops them; `note` goes to `extra`;
//! - names go through the inverted `csl.names` (`container-author` → `bookAuthor`), in the
//!   schema's order of creator types and the answer's order within one; a creator type the
//!   item type lacks becomes its primary creator type, as Zotero does;
//! - dates: ranges and circa dates as EDTF (`2021/2026`, `-0429~`), literal and raw dates as
//!   written (a literal that would parse as a date is quoted), otherwise `date-parts` as
//!   `YYYY-MM-DD`, `YYYY-MM` or `YYYY` (Zotero writes "July 31, 2013", which it parses back
//!   to the same date; the ISO form does not depend on a locale); `accessed` as ISO.
//!
//! Beyond `itemFromCSLJSON`, because DOI agencies' CSL carries them: titles and abstracts
//! lose JATS and other unsupported markup (Crossref REST.js `removeUnsupportedMarkup`), a
//! `subtitle` is appended to the title the way Crossref REST.js does, and
//! `container-title-short` fills `journalAbbreviation` when it differs from the container
//! title (also Crossref REST.js).

use serde_json::{Map, Value};

use crate::mapping_error::MappingError;
use crate::schema::{schema, Schema};
use crate::text::{clean_markup, clean_title, iso_date, str_to_iso, trim_internal};
use crate::zotero_item::{DraftCreator, ZoteroItemDraft};

const SOURCE: &str = "CSL-JSON";

/// CSL variables whose values are titles (markup cleaned, one line; of an array, the first).
const TITLE_VARIABLES: &[&str] = &[
    "title",
    "container-title",
    "collection-title",
    "title-short",
    "shortTitle",
    "event-title",
    "part-title",
];

/// Maps one CSL-JSON item (an object) to a Zotero item draft.
pub fn from_csl_json(csl: &Value) -> Result<ZoteroItemDraft, MappingError> {
    let obj = csl
        .as_object()
        .ok_or_else(|| MappingError::shape(SOURCE, "not a JSON object"))?;
    let schema = schema()?;
    Ok(map_csl(schema, obj))
}

/// Maps the CSL-JSON of DOI content negotiation (`https://doi.org/<doi>` with
/// `Accept: application/vnd.citationstyles.csl+json`): `from_csl_json`, with the
/// `libraryCatalog` Zotero's DOI Content Negotiation.js gives it.
pub fn from_doi_csl_json(csl: &Value) -> Result<ZoteroItemDraft, MappingError> {
    let mut draft = from_csl_json(csl)?;
    let schema = schema()?;
    draft.set(schema, "libraryCatalog", "DOI.org (CSL JSON)");
    Ok(draft)
}

/// JavaScript truthiness of an optional JSON value.
pub(crate) fn truthy(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(Value::Number(n)) => n.as_f64().is_some_and(|f| f != 0.0),
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Array(_)) | Some(Value::Object(_)) => true,
    }
}

/// The Zotero item type for a CSL item (`itemFromCSLJSON`'s special cases, then the first
/// type of `csl.types`, else `document`).
pub(crate) fn csl_item_type(schema: &Schema, obj: &Map<String, Value>) -> String {
    // CSL JSON.js: a missing (falsy) type is `article`; a type that is no string is unknown.
    let csl_type = match obj.get("type") {
        Some(Value::String(t)) if !t.is_empty() => t.as_str(),
        t if !truthy(t) => "article",
        _ => "",
    };
    let has = |k: &str| truthy(obj.get(k));
    let special = match csl_type {
        "bill" if has("publisher") || has("number-of-volumes") => Some("hearing"),
        "broadcast"
            if [
                "archive",
                "archive_location",
                "container-title",
                "event-place",
                "publisher",
                "publisher-place",
                "source",
            ]
            .iter()
            .any(|k| has(k)) =>
        {
            Some(if has("author") && has("director") {
                "radioBroadcast"
            } else {
                "tvBroadcast"
            })
        }
        "book" if has("version") => Some("computerProgram"),
        "song" if has("number") => Some("podcast"),
        "motion_picture"
            if ["collection-title", "volume", "number-of-volumes", "ISBN"]
                .iter()
                .any(|k| has(k)) =>
        {
            Some("videoRecording")
        }
        _ => None,
    };
    special
        .or_else(|| schema.item_type_for_csl(csl_type))
        .unwrap_or("document")
        .to_owned()
}

/// A CSL text value as a Zotero field value: strings as they are, numbers written out,
/// arrays (Crossref writes `ISSN`, `ISBN` as arrays) joined with ", " — of a title, the
/// first. `None` for anything else.
fn text_value(variable: &str, v: &Value) -> Option<String> {
    let scalar = |v: &Value| match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    };
    let raw = match v {
        Value::Array(a) => {
            let items: Vec<String> = a
                .iter()
                .filter_map(scalar)
                .filter(|s| !s.trim().is_empty())
                .collect();
            if TITLE_VARIABLES.contains(&variable) {
                items.into_iter().next()
            } else if items.is_empty() {
                None
            } else {
                Some(items.join(", "))
            }
        }
        other => scalar(other),
    }?;
    let cleaned = if TITLE_VARIABLES.contains(&variable) {
        clean_title(&raw)
    } else if variable == "abstract" {
        clean_markup(&raw)
    } else if variable == "note" {
        raw.trim().to_owned()
    } else {
        trim_internal(&raw)
    };
    (!cleaned.is_empty()).then_some(cleaned)
}

/// Appends a subtitle to a title as Crossref REST.js does: not when the title already
/// contains it, with one colon.
pub(crate) fn join_subtitle(title: &str, subtitle: &str) -> String {
    if subtitle.is_empty() || title.to_lowercase().contains(&subtitle.to_lowercase()) {
        return title.to_owned();
    }
    if title.ends_with(':') {
        format!("{title} {subtitle}")
    } else {
        format!("{title}: {subtitle}")
    }
}

fn map_csl(schema: &Schema, obj: &Map<String, Value>) -> ZoteroItemDraft {
    let item_type = csl_item_type(schema, obj);
    let mut draft = ZoteroItemDraft::new(&item_type);

    // itemFromCSLJSON: these types keep an event place as their place.
    let mut moved_place = None;
    if ["audioRecording", "presentation", "videoRecording"].contains(&item_type.as_str()) {
        moved_place = obj.get("event-place");
    }
    let lookup = |var: &str| -> Option<&Value> {
        match (var, moved_place) {
            ("event-place", Some(_)) => None,
            ("publisher-place", Some(p)) => Some(p),
            _ => obj.get(var),
        }
    };

    for (variable, fields) in schema.csl_text() {
        let Some(value) = lookup(variable) else {
            continue;
        };
        let Some(target) = fields
            .iter()
            .find_map(|f| schema.field_for_type(&item_type, f))
        else {
            continue;
        };
        if let Some(text) = text_value(variable, value) {
            draft.set(schema, target, &text);
        }
    }

    if let Some(sub) = obj.get("subtitle").and_then(|v| text_value("title", v)) {
        if let Some(title) = draft.field(schema, "title").map(str::to_owned) {
            draft.set(schema, "title", &join_subtitle(&title, &sub));
        }
    }
    if let Some(short) = obj
        .get("container-title-short")
        .and_then(|v| text_value("container-title", v))
    {
        let differs = draft.field(schema, "publicationTitle") != Some(short.as_str());
        if differs {
            draft.set_if_absent(schema, "journalAbbreviation", &short);
        }
    }

    map_names(schema, obj, &mut draft);

    for (variable, field) in schema.csl_dates() {
        let Some(value) = obj.get(variable) else {
            continue;
        };
        if schema.field_for_type(&item_type, field).is_none() {
            continue;
        }
        if let Some(date) = csl_date(value, variable == "accessed") {
            draft.set(schema, field, &date);
        }
    }
    draft
}

fn map_names(schema: &Schema, obj: &Map<String, Value>, draft: &mut ZoteroItemDraft) {
    let item_type = draft.item_type.clone();
    let Some(primary) = schema.primary_creator_type(&item_type) else {
        return;
    };
    let mut done: Vec<&str> = Vec::new();
    for (zotero_type, csl_var) in schema.csl_names() {
        if done.contains(&csl_var.as_str()) {
            continue;
        }
        done.push(csl_var);
        let Some(names) = obj.get(csl_var.as_str()).and_then(Value::as_array) else {
            continue;
        };
        let creator_type = if schema.creator_type_valid(&item_type, zotero_type) {
            zotero_type.as_str()
        } else {
            primary
        };
        draft
            .creators
            .extend(names.iter().filter_map(|n| csl_name(creator_type, n)));
    }
}

fn name_part(n: &Map<String, Value>, key: &str) -> String {
    n.get(key)
        .and_then(Value::as_str)
        .map(trim_internal)
        .unwrap_or_default()
}

/// One CSL name: `family`/`given` → last/first name (particles kept with them, a suffix
/// after the given names as "Given, Jr."), else `literal` (or a non-standard `name`) → one
/// field; nothing usable → `None`.
pub(crate) fn csl_name(creator_type: &str, n: &Value) -> Option<DraftCreator> {
    let n = n.as_object()?;
    let family = name_part(n, "family");
    let given = name_part(n, "given");
    if !family.is_empty() || !given.is_empty() {
        let mut last = family;
        let ndp = name_part(n, "non-dropping-particle");
        if !ndp.is_empty() {
            last = format!("{ndp} {last}").trim().to_owned();
        }
        let mut first = given;
        let dp = name_part(n, "dropping-particle");
        if !dp.is_empty() {
            first = format!("{first} {dp}").trim().to_owned();
        }
        let suffix = name_part(n, "suffix");
        if !suffix.is_empty() {
            first = format!("{first}, {suffix}");
        }
        return Some(DraftCreator::split(creator_type, &first, &last));
    }
    let literal = name_part(n, "literal");
    let literal = if literal.is_empty() {
        name_part(n, "name")
    } else {
        literal
    };
    (!literal.is_empty()).then(|| DraftCreator::single(creator_type, &literal))
}

/// A date part: an integer, or a string of digits (CSL allows both).
fn to_int(v: &Value) -> Option<i64> {
    match v {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => {
            let digits = s.strip_prefix('-').unwrap_or(s);
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            s.parse().ok()
        }
        _ => None,
    }
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

type Ymd = (i64, Option<i64>, Option<i64>);

/// One `date-parts` entry for EDTF: every part an integer in range, a real calendar date.
fn edtf_parts(parts: &[Value]) -> Option<Ymd> {
    let mut it = parts.iter();
    let year = to_int(it.next()?)?;
    if !(-9999..=9999).contains(&year) {
        return None;
    }
    let month = match it.next() {
        Some(m) => Some(to_int(m).filter(|m| (1..=12).contains(m))?),
        None => None,
    };
    let day = match (it.next(), month) {
        (Some(d), Some(m)) => Some(to_int(d).filter(|d| (1..=days_in_month(year, m)).contains(d))?),
        _ => None,
    };
    Some((year, month, day))
}

fn edtf_string((y, m, d): Ymd) -> String {
    let mut s = if y < 0 {
        format!("-{:04}", y.unsigned_abs())
    } else {
        format!("{y:04}")
    };
    if let Some(m) = m {
        s.push_str(&format!("-{m:02}"));
        if let Some(d) = d {
            s.push_str(&format!("-{d:02}"));
        }
    }
    s
}

/// `cslDateToEDTF`: a range or circa date as EDTF; `None` for a plain date, a season, or
/// anything EDTF cannot say (reversed or degenerate ranges, invalid dates).
fn csl_date_to_edtf(date: &Map<String, Value>) -> Option<String> {
    if truthy(date.get("season")) {
        return None;
    }
    let parts = date.get("date-parts")?.as_array()?;
    let begin = parts.first()?.as_array().filter(|a| !a.is_empty())?;
    let end = parts
        .get(1)
        .and_then(Value::as_array)
        .filter(|a| !a.is_empty());
    let circa = truthy(date.get("circa"));
    if end.is_none() && !circa {
        return None;
    }
    let b = edtf_parts(begin)?;
    let mut s = edtf_string(b);
    if let Some(end) = end {
        let e = edtf_parts(end)?;
        let key = |(y, m, d): Ymd| (y, m.unwrap_or(1), d.unwrap_or(1));
        if b == e || key(b) > key(e) {
            return None;
        }
        s.push('/');
        s.push_str(&edtf_string(e));
    }
    if circa {
        s.push('~');
    }
    Some(s)
}

/// Whether a literal date would come back as the same literal (Zotero's
/// `dateExportsAsLiteral`, simplified): it does unless it holds a year Zotero would parse,
/// taken here as a run of three or four digits.
fn exports_as_literal(s: &str) -> bool {
    let s = s.trim();
    if (s.starts_with('"') || s.starts_with('\u{201c}'))
        && (s.ends_with('"') || s.ends_with('\u{201d}'))
        && s.chars().count() > 1
    {
        return false;
    }
    !s.split(|c: char| !c.is_ascii_digit())
        .any(|run| (3..=4).contains(&run.len()))
}

/// A CSL season (1–4 or a name) as a word.
fn season_word(v: &Value) -> Option<String> {
    match v {
        Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_owned()),
        other => match to_int(other)? {
            1 => Some("Spring".into()),
            2 => Some("Summer".into()),
            3 => Some("Autumn".into()),
            4 => Some("Winter".into()),
            _ => None,
        },
    }
}

/// A CSL date variable as a Zotero date field value (see the module documentation).
pub(crate) fn csl_date(v: &Value, accessed: bool) -> Option<String> {
    let date = match v {
        Value::Object(o) => o,
        // Not CSL, but seen in the wild: the date as a string.
        Value::String(s) => {
            return if accessed {
                str_to_iso(s)
            } else {
                Some(s.trim().to_owned()).filter(|s| !s.is_empty())
            }
        }
        _ => return None,
    };
    let literal = date
        .get("literal")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty());
    let raw = date
        .get("raw")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty());
    if let Some(text) = literal.or(raw) {
        if accessed {
            return str_to_iso(text);
        }
        if literal.is_some() && !exports_as_literal(text) {
            return Some(format!("\"{}\"", text.trim()));
        }
        return Some(text.trim().to_owned());
    }
    if !accessed {
        if let Some(edtf) = csl_date_to_edtf(date) {
            return Some(edtf);
        }
    }
    let first = date
        .get("date-parts")
        .and_then(Value::as_array)
        .and_then(|p| p.first())
        .and_then(Value::as_array)?;
    let part = |i: usize| first.get(i).filter(|v| truthy(Some(v)));
    let year_value = part(0)?;
    let month = part(1).and_then(to_int).and_then(|m| u32::try_from(m).ok());
    let day = part(2).and_then(to_int).and_then(|d| u32::try_from(d).ok());
    let date_str = match to_int(year_value) {
        Some(year) => iso_date(year, month, day),
        None => year_value.as_str().map(str::trim).map(str::to_owned)?,
    };
    if accessed {
        return Some(date_str);
    }
    Some(match date.get("season").and_then(season_word) {
        Some(season) => format!("{season} {date_str}"),
        None => date_str,
    })
}

#[cfg(test)]
mod tests;
