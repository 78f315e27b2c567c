//! MCP prompts: research workflows the user picks (`summarize_item`, `flashcards`,
//! `deep_research`, `literature_review`). A prompt never calls a model nor Zotero: it checks
//! its arguments and answers the instructions, with links to the resources to read and the
//! names of the tools to call.

use rmcp::model::{GetPromptResult, Prompt, PromptArgument, PromptMessage, Role};
use serde_json::{Map, Value};
use zotero_api::{LibraryRef, ObjectKey};

use crate::error::ToolError;
use crate::mcp::resources::{link, uri, View, JSON, MARKDOWN, TEXT};
use crate::tools::params::quote;

const FOCUS: &[&str] = &["key_ideas", "arguments", "methods", "teach_back"];
const CARD_TYPES: &[&str] = &["qa", "cloze"];

/// Bounds of the numeric arguments: (least, most, default).
const NUM_CARDS: (u64, u64, u64) = (1, 50, 10);
const MAX_ROUNDS: (u64, u64, u64) = (1, 10, 3);
const QUERIES_PER_ROUND: (u64, u64, u64) = (1, 10, 4);
const TOP_N: (u64, u64, u64) = (1, 25, 5);
/// The longest research question accepted.
const QUESTION_CHARS: usize = 2_000;

fn arg(name: &str, description: &str, required: bool) -> PromptArgument {
    PromptArgument::new(name)
        .with_description(description)
        .with_required(required)
}

fn library_arg() -> PromptArgument {
    arg(
        "library",
        "user or group:<id> (zotero_list_libraries lists them); the server's default library if left out",
        false,
    )
}

/// The prompts, as `prompts/list` answers them.
pub fn list() -> Vec<Prompt> {
    vec![
        Prompt::new(
            "summarize_item",
            Some("Summarize one Zotero item from its metadata, full text, notes and annotations."),
            Some(vec![
                arg("item_key", "The item's key, e.g. X42A7DEE", true),
                arg(
                    "focus",
                    "key_ideas (default), arguments, methods or teach_back",
                    false,
                ),
                library_arg(),
            ]),
        )
        .with_title("Summarize an item"),
        Prompt::new(
            "flashcards",
            Some("Write study flashcards from one Zotero item (and the reader's annotations)."),
            Some(vec![
                arg("item_key", "The item's key, e.g. X42A7DEE", true),
                arg("num_cards", "How many cards, 1 to 50 (default 10)", false),
                arg("card_type", "qa (question and answer, default) or cloze", false),
                arg(
                    "use_annotations",
                    "true (default): build on the reader's highlights and comments; false: the text only",
                    false,
                ),
                library_arg(),
            ]),
        )
        .with_title("Flashcards from an item"),
        Prompt::new(
            "deep_research",
            Some(
                "Answer a research question from the library: search, read the full texts, \
                 reflect on gaps, search again, answer with zotero:// citations.",
            ),
            Some(vec![
                arg("question", "The research question", true),
                arg("max_rounds", "Rounds of search and reading, 1 to 10 (default 3)", false),
                arg(
                    "queries_per_round",
                    "Search queries per round, 1 to 10 (default 4)",
                    false,
                ),
                arg(
                    "top_n",
                    "Items read in full per round, 1 to 25 (default 5)",
                    false,
                ),
                library_arg(),
            ]),
        )
        .with_title("Deep research in the library"),
        Prompt::new(
            "literature_review",
            Some("Write a literature review of the items of one Zotero collection."),
            Some(vec![
                arg("collection_key", "The collection's key, e.g. ATTNDP62", true),
                library_arg(),
            ]),
        )
        .with_title("Literature review of a collection"),
    ]
}

/// A prompt's arguments, checked one by one; every refusal names the argument.
struct Args {
    map: Map<String, Value>,
}

impl Args {
    fn new(
        prompt: &str,
        map: Option<Map<String, Value>>,
        known: &[&str],
    ) -> Result<Self, ToolError> {
        let map = map.unwrap_or_default();
        if let Some(unknown) = map.keys().find(|k| !known.contains(&k.as_str())) {
            return Err(ToolError::invalid(
                unknown,
                format!(
                    "{prompt} has no argument '{}'; its arguments are {}",
                    quote(unknown),
                    known.join(", ")
                ),
            ));
        }
        Ok(Self { map })
    }

    /// The argument as text; absent when missing, null or empty (clients send "" for an
    /// optional argument left blank).
    fn text(&self, name: &str) -> Option<String> {
        let s = match self.map.get(name)? {
            Value::String(s) => s.trim().to_string(),
            Value::Number(n) => n.to_string(),
            Value::Bool(b) => b.to_string(),
            other => other.to_string(),
        };
        (!s.is_empty()).then_some(s)
    }

    fn required(&self, name: &str) -> Result<String, ToolError> {
        self.text(name)
            .ok_or_else(|| ToolError::invalid(name, format!("'{name}' is required")))
    }

    fn key(&self, name: &str) -> Result<ObjectKey, ToolError> {
        let raw = self.required(name)?;
        ObjectKey::parse(&raw).map_err(|e| {
            ToolError::invalid(name, format!("'{name}' must be {e}, got '{}'", quote(&raw)))
        })
    }

    fn choice(&self, name: &str, options: &[&'static str]) -> Result<&'static str, ToolError> {
        let Some(raw) = self.text(name) else {
            return Ok(options.first().copied().unwrap_or_default());
        };
        options.iter().copied().find(|o| *o == raw).ok_or_else(|| {
            ToolError::invalid(
                name,
                format!(
                    "'{name}' must be one of {}, got '{}'",
                    options.join(", "),
                    quote(&raw)
                ),
            )
        })
    }

    fn number(&self, name: &str, (min, max, default): (u64, u64, u64)) -> Result<u64, ToolError> {
        let Some(raw) = self.text(name) else {
            return Ok(default);
        };
        raw.parse::<u64>()
            .ok()
            .filter(|n| (min..=max).contains(n))
            .ok_or_else(|| {
                ToolError::invalid(
                    name,
                    format!(
                        "'{name}' must be a whole number from {min} to {max}, got '{}'",
                        quote(&raw)
                    ),
                )
            })
    }

    fn flag(&self, name: &str, default: bool) -> Result<bool, ToolError> {
        match self.text(name).as_deref() {
            None => Ok(default),
            Some("true") => Ok(true),
            Some("false") => Ok(false),
            Some(other) => Err(ToolError::invalid(
                name,
                format!("'{name}' must be true or false, got '{}'", quote(other)),
            )),
        }
    }

    fn library(&self, default: LibraryRef) -> Result<LibraryRef, ToolError> {
        match self.text("library") {
            None => Ok(default),
            Some(raw) => raw
                .parse()
                .map_err(|e| ToolError::invalid("library", format!("{e}"))),
        }
    }
}

fn text(t: String) -> PromptMessage {
    PromptMessage::new_text(Role::User, t)
}

/// The messages of prompt `name` for these arguments; `library` is the server's default.
pub fn get(
    name: &str,
    arguments: Option<Map<String, Value>>,
    library: LibraryRef,
) -> Result<GetPromptResult, ToolError> {
    match name {
        "summarize_item" => summarize_item(
            Args::new(name, arguments, &["item_key", "focus", "library"])?,
            library,
        ),
        "flashcards" => flashcards(
            Args::new(
                name,
                arguments,
                &[
                    "item_key",
                    "num_cards",
                    "card_type",
                    "use_annotations",
                    "library",
                ],
            )?,
            library,
        ),
        "deep_research" => deep_research(
            Args::new(
                name,
                arguments,
                &[
                    "question",
                    "max_rounds",
                    "queries_per_round",
                    "top_n",
                    "library",
                ],
            )?,
            library,
        ),
        "literature_review" => literature_review(
            Args::new(name, arguments, &["collection_key", "library"])?,
            library,
        ),
        _ => {
            let names: Vec<String> = list().into_iter().map(|p| p.name).collect();
            Err(ToolError::invalid(
                "name",
                format!(
                    "there is no prompt named '{}'; the prompts are {}",
                    quote(name),
                    names.join(", ")
                ),
            ))
        }
    }
}

/// Links to the item's resources: metadata, full text, notes, annotations.
fn item_links(lib: LibraryRef, key: &str, annotations: bool) -> Vec<PromptMessage> {
    let mut links = vec![
        link(uri(lib, View::Item, key), "Item metadata", JSON),
        link(uri(lib, View::FullText, key), "Full text", TEXT),
        link(uri(lib, View::Notes, key), "Notes", MARKDOWN),
    ];
    if annotations {
        links.push(link(
            uri(lib, View::AnnotationsMarkdown, key),
            "Annotations",
            MARKDOWN,
        ));
    }
    links
}

fn summarize_item(a: Args, default: LibraryRef) -> Result<GetPromptResult, ToolError> {
    let key = a.key("item_key")?;
    let focus = a.choice("focus", FOCUS)?;
    let lib = a.library(default)?;
    let k = key.as_str();
    let how = match focus {
        "arguments" => "Lay out its argument: the claims, the evidence for each, the assumptions, and where the reasoning is weakest.",
        "methods" => "Describe its methods: data, design, procedures, measures and analyses, and what they can and cannot show.",
        "teach_back" => "Explain it as to a student meeting the topic for the first time, then ask me three questions that check I understood it.",
        _ => "Give its key ideas: the question it asks, its main contributions and findings, and why they matter.",
    };
    let mut messages = vec![text(format!(
        "Summarize the Zotero item {k} (library {lib}). {how}\n\n\
         Read the resources linked below: the metadata first, then the full text (if it says it was \
         cut, read on with zotero_get_item_fulltext and its offset), the notes and the \
         annotations, which show what the reader found important. Without the resources, call \
         zotero_get_item_metadata, zotero_get_item_fulltext, zotero_get_notes and \
         zotero_get_annotations with item_key {k} and library {lib}. If there is no full text, \
         say so and summarize from the abstract, notes and annotations.\n\n\
         Quote only what the item says, with page labels where the annotations give them, and \
         end with a link to the item: {}.",
        lib.zotero_url(&key)
    ))];
    messages.extend(item_links(lib, k, true));
    Ok(GetPromptResult::new(messages).with_description(format!("Summary ({focus}) of {k}")))
}

fn flashcards(a: Args, default: LibraryRef) -> Result<GetPromptResult, ToolError> {
    let key = a.key("item_key")?;
    let num = a.number("num_cards", NUM_CARDS)?;
    let card_type = a.choice("card_type", CARD_TYPES)?;
    let use_annotations = a.flag("use_annotations", true)?;
    let lib = a.library(default)?;
    let k = key.as_str();
    let form = if card_type == "cloze" {
        "cloze deletions: one sentence per card with the key term hidden as {{c1::term}}"
    } else {
        "question and answer: a precise question on the front, a short answer on the back"
    };
    let source = if use_annotations {
        "Build first on the reader's annotations (highlights and comments: what they found \
         important), then fill in from the full text."
    } else {
        "Work from the full text and metadata; leave the annotations aside."
    };
    let mut messages = vec![text(format!(
        "Write {num} flashcards from the Zotero item {k} (library {lib}), as {form}. {source}\n\n\
         Read the resources linked below (or call zotero_get_item_metadata, \
         zotero_get_item_fulltext{} with item_key {k} and library {lib}). One idea per card, \
         no card answerable without having read the item, no two cards on the same fact. \
         Give the cards as a Markdown table (Front | Back), with the page label where \
         known, and end with a link to the item: {}.",
        if use_annotations {
            " and zotero_get_annotations"
        } else {
            ""
        },
        lib.zotero_url(&key)
    ))];
    messages.extend(item_links(lib, k, use_annotations));
    Ok(GetPromptResult::new(messages)
        .with_description(format!("{num} {card_type} flashcards from {k}")))
}

fn deep_research(a: Args, default: LibraryRef) -> Result<GetPromptResult, ToolError> {
    let question = a.required("question")?;
    if question.chars().count() > QUESTION_CHARS {
        return Err(ToolError::invalid(
            "question",
            format!("'question' must be at most {QUESTION_CHARS} characters"),
        ));
    }
    let rounds = a.number("max_rounds", MAX_ROUNDS)?;
    let queries = a.number("queries_per_round", QUERIES_PER_ROUND)?;
    let top_n = a.number("top_n", TOP_N)?;
    let lib = a.library(default)?;
    let messages = vec![text(format!(
        "Research question: {question}\n\n\
         Answer it from the Zotero library {lib}, in at most {rounds} rounds of this workflow:\n\
         1. Queries: write {queries} search queries that cover different aspects, terms and \
         synonyms of the question (in the first round), or the gaps found so far (later).\n\
         2. Search: run each with zotero_search_items (library {lib}); when the server also \
         lists zotero_semantic_search, run each there too. Merge the results and pick the \
         {top_n} most relevant items not read yet.\n\
         3. Read: for each, read the resource zotero://{lib}/items/{{key}}/fulltext.txt (or call \
         zotero_get_item_fulltext, following next_offset where it matters), and \
         zotero://{lib}/items/{{key}}/annotations.md for what the reader marked. Without full \
         text, use zotero_get_item_metadata (the abstract). Note each finding with its item \
         key and page.\n\
         4. Reflect: what does the evidence answer, where do the items disagree, and what is \
         still missing or weakly supported?\n\
         5. Follow up: if gaps remain and rounds are left, write follow-up queries for them \
         and go back to step 2; otherwise stop.\n\n\
         Then answer: a direct answer first, then the evidence by theme, the disagreements and \
         the open gaps. Cite every claim with its item's link, zotero://select/library/items/KEY \
         for the user library or zotero://select/groups/ID/items/KEY for a group (the \
         zotero_url of each answer), and say plainly what the library does not cover. Use \
         only what you read in the library."
    ))];
    Ok(GetPromptResult::new(messages).with_description(format!(
        "Deep research, {rounds} rounds of {queries} queries, {top_n} items read per round"
    )))
}

fn literature_review(a: Args, default: LibraryRef) -> Result<GetPromptResult, ToolError> {
    let key = a.key("collection_key")?;
    let lib = a.library(default)?;
    let k = key.as_str();
    let messages = vec![
        text(format!(
            "Write a literature review of the Zotero collection {k} (library {lib}).\n\n\
             1. Read the collection's items from the resource linked below (the first 25; \
             for more, call zotero_list_items with collection_key {k}, library {lib} and \
             start = next_start until there is none).\n\
             2. For each item, read zotero://{lib}/items/{{key}} (metadata and abstract) and, \
             where the item matters to the review, zotero://{lib}/items/{{key}}/fulltext.txt, \
             notes.md and annotations.md (or zotero_get_item_metadata, \
             zotero_get_item_fulltext, zotero_get_notes, zotero_get_annotations).\n\
             3. Group the items by theme, approach or finding; compare their methods and \
             results; trace how the field developed; name the agreements, the contradictions \
             and the gaps.\n\
             4. Write the review in sections by theme, each claim cited with its item's \
             zotero_url (zotero://select/…), and end with a bibliography from zotero_cite \
             (the item keys, style apa unless I ask for another: zotero://styles lists \
             common ones).\n\n\
             Use only the collection's items; say where they are too few to support a claim. \
             The collection in Zotero: {}.",
            lib.collection_url(&key)
        )),
        link(uri(lib, View::Collection, k), "Collection items", JSON),
    ];
    Ok(GetPromptResult::new(messages).with_description(format!("Literature review of {k}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn get_with(name: &str, args: Value) -> Result<GetPromptResult, ToolError> {
        get(name, args.as_object().cloned(), LibraryRef::User)
    }

    #[test]
    fn refusals_name_the_argument() {
        for (name, args, field) in [
            ("summarize_item", json!({}), "item_key"),
            ("summarize_item", json!({"item_key": "nope"}), "item_key"),
            (
                "summarize_item",
                json!({"item_key": "VASWANI7", "focus": "x"}),
                "focus",
            ),
            (
                "summarize_item",
                json!({"item_key": "VASWANI7", "extra": 1}),
                "extra",
            ),
            (
                "flashcards",
                json!({"item_key": "VASWANI7", "num_cards": "0"}),
                "num_cards",
            ),
            (
                "flashcards",
                json!({"item_key": "VASWANI7", "num_cards": 51}),
                "num_cards",
            ),
            (
                "flashcards",
                json!({"item_key": "VASWANI7", "card_type": "essay"}),
                "card_type",
            ),
            (
                "flashcards",
                json!({"item_key": "VASWANI7", "use_annotations": "yes"}),
                "use_annotations",
            ),
            ("deep_research", json!({"question": " "}), "question"),
            (
                "deep_research",
                json!({"question": "q", "top_n": "many"}),
                "top_n",
            ),
            (
                "literature_review",
                json!({"collection_key": "ATTNDP62", "library": "x"}),
                "library",
            ),
            ("nope", json!({}), "name"),
        ] {
            let e = get_with(name, args.clone()).unwrap_err();
            assert_eq!(e.details["field"], field, "{name} {args}: {}", e.message);
            assert!(e.message.contains(field), "{}", e.message);
        }
    }

    #[test]
    fn numbers_come_as_text_or_numbers() {
        let r = get_with(
            "flashcards",
            json!({"item_key": "VASWANI7", "num_cards": "7"}),
        )
        .unwrap();
        assert!(r.description.unwrap().starts_with("7 qa"));
        let r = get_with(
            "flashcards",
            json!({"item_key": "VASWANI7", "num_cards": 12, "card_type": ""}),
        )
        .unwrap();
        assert!(r.description.unwrap().starts_with("12 qa"));
    }
}
