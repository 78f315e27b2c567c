//! What the web API answers for items in each `format` (`ItemsController::items` and
//! `generateMultiResponse`, `Zotero_API::multiResponse`): JSON with its `include`s
//! (`Zotero_Item::toResponseJSON`: `data`, `bib`, `citation`, `csljson`, exports), `bib`
//! (an XHTML bibliography, at most 150 items), `csljson` (`{"items": [...]}`) and the
//! exports of the translation server with their Content-Types.

use serde_json::{json, Value};

use super::cite::{self, Cite, Renderer};
use super::export;
use super::libs::Lib;
use super::params::Params;
use super::Answer;

/// The CSL JSON id the web API gives an item (`libraryID/KEY`).
fn web_csl_id(lib: &Lib) -> impl Fn(&Value) -> String + '_ {
    move |i: &Value| format!("{}/{}", lib.id().number(), i["key"].as_str().unwrap_or(""))
}

fn cite_for(p: &Params) -> Result<Cite, Answer> {
    let style = cite::web_style(p.style.as_deref()).map_err(|e| Answer::text(400, e.body()))?;
    Ok(Cite::new(
        style,
        &cite::web_locale(p.locale.as_deref()),
        p.linkwrap,
        Renderer::Web,
    ))
}

/// A JSON item with what `include` asks for besides (or instead of) `data`.
pub(crate) fn with_includes(lib: &Lib, mut out: Value, p: &Params) -> Result<Value, Answer> {
    let item = out.clone();
    for inc in &p.include {
        match inc.as_str() {
            "bib" => {
                let c = cite_for(p)?;
                // Single-item bibliographies lose the XML prolog.
                out["bib"] = json!(c.bibliography(&[&item]));
            }
            "citation" => out["citation"] = json!(cite_for(p)?.citation(&item)),
            "csljson" => out["csljson"] = export::csl_item(&item, web_csl_id(lib)(&item)),
            f if export::WEB_FORMATS.contains(&f) => {
                out[f] = json!(export::export(f, &[&item], &web_csl_id(lib)));
            }
            _ => {}
        }
    }
    if !p.include.iter().any(|i| i == "data") {
        if let Some(m) = out.as_object_mut() {
            m.remove("data");
        }
    }
    Ok(out)
}

/// The answer for `items` (already rendered as JSON, in order) in a format other than
/// `keys`/`versions`; `total`: how many the request matched (the 150-item limit of `bib`
/// is on that).
pub(crate) fn items_answer(
    lib: &Lib,
    items: Vec<Value>,
    total: usize,
    single: bool,
    p: &Params,
) -> Answer {
    let refs: Vec<&Value> = items.iter().collect();
    match p.format.as_str() {
        "json" => {
            let rendered: Result<Vec<Value>, Answer> = items
                .iter()
                .map(|i| with_includes(lib, i.clone(), p))
                .collect();
            match (rendered, single) {
                (Err(a), _) => a,
                (Ok(mut v), true) => Answer::json(&v.pop().unwrap_or(Value::Null)),
                (Ok(v), false) => Answer::json(&Value::Array(v)),
            }
        }
        "bib" => {
            if total > cite::MAX_BIBLIOGRAPHY_ITEMS {
                return Answer::text(
                    413,
                    &format!(
                        "Cannot generate bibliography with more than {} items",
                        cite::MAX_BIBLIOGRAPHY_ITEMS
                    ),
                );
            }
            let c = match cite_for(p) {
                Ok(c) => c,
                Err(a) => return a,
            };
            if refs.is_empty() {
                // No bibliography and no citations: the server echoes nothing.
                return Answer::raw(200, Vec::new(), "text/html; charset=UTF-8");
            }
            let body = format!("<?xml version=\"1.0\"?>\n{}\n", c.bibliography(&refs));
            Answer::raw(200, body.into_bytes(), "text/html; charset=UTF-8")
        }
        "csljson" => {
            let arr: Vec<Value> = refs
                .iter()
                .map(|i| export::csl_item(i, web_csl_id(lib)(i)))
                .collect();
            let body = serde_json::to_vec_pretty(&json!({ "items": arr })).unwrap();
            Answer::raw(200, body, export::content_type("csljson"))
        }
        f => {
            let body = export::export(f, &refs, &web_csl_id(lib));
            if refs.is_empty() {
                // `Zotero_Translate::doExport` without items.
                return Answer::raw(200, Vec::new(), "text/plain");
            }
            Answer::raw(200, body.into_bytes(), export::content_type(f))
        }
    }
}
