//! A fake web host under `/web/` (files with any status and headers, redirects, chunked
//! answers) and a fake arXiv under `/arxiv/` (`/arxiv/pdf/<id>[vN][.pdf]`), on the same
//! server as the API emulator, for `file_url` and arXiv tests. No key is needed.

use std::collections::{BTreeMap, HashMap};

use super::{Answer, Emulator, Recorded};

/// A file the fake web host serves.
#[derive(Debug, Clone)]
pub struct HostedFile {
    /// HTTP status (200 unless a test wants an error page).
    pub status: u16,
    pub body: Vec<u8>,
    /// `Content-Type`; none sends no such header.
    pub content_type: Option<String>,
    /// `Content-Disposition`, e.g. `attachment; filename="paper.pdf"`.
    pub content_disposition: Option<String>,
    /// Send the body with `Transfer-Encoding: chunked` (no `Content-Length`).
    pub chunked: bool,
}

impl HostedFile {
    /// A 200 answer with this body and content type.
    pub fn new(body: impl Into<Vec<u8>>, content_type: &str) -> HostedFile {
        HostedFile {
            status: 200,
            body: body.into(),
            content_type: Some(content_type.to_string()),
            content_disposition: None,
            chunked: false,
        }
    }
    /// A 200 `application/pdf` answer.
    pub fn pdf(body: impl Into<Vec<u8>>) -> HostedFile {
        HostedFile::new(body, "application/pdf")
    }
}

#[derive(Debug, Clone)]
enum ArxivEntry {
    Pdf(Vec<u8>),
    Page(String),
}

#[derive(Default)]
pub(crate) struct WebState {
    files: HashMap<String, HostedFile>,
    redirects: HashMap<String, (String, u16)>,
    /// Base id (no version) -> version -> answer.
    arxiv: HashMap<String, BTreeMap<u32, ArxivEntry>>,
    arxiv_redirect_unversioned: bool,
}

/// `/x` for `x`, `/x` or `/web/x`: the path below `/web`.
fn web_path(path: &str) -> String {
    let p = if path.starts_with('/') {
        path.to_string()
    } else {
        format!("/{path}")
    };
    p.strip_prefix("/web")
        .filter(|r| r.starts_with('/'))
        .map(str::to_string)
        .unwrap_or(p)
}

/// Splits `1706.03762v2` into (`1706.03762`, Some(2)); old-style ids work the same.
fn split_version(id: &str) -> (&str, Option<u32>) {
    if let Some(pos) = id.rfind('v') {
        let (base, v) = (&id[..pos], &id[pos + 1..]);
        let digit_before = base.as_bytes().last().is_some_and(u8::is_ascii_digit);
        if digit_before && !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) {
            return (base, v.parse().ok());
        }
    }
    (id, None)
}

fn html(status: u16, body: &str) -> Answer {
    Answer::raw(status, body.as_bytes().to_vec(), "text/html; charset=utf-8")
}

/// `GET|HEAD /web/...`
pub(crate) fn web_get(st: &super::State, req: &Recorded) -> Answer {
    let path = web_path(&req.path);
    if let Some((location, status)) = st.web.redirects.get(&path) {
        return Answer::empty(*status).header("Location", location);
    }
    let Some(f) = st.web.files.get(&path) else {
        return html(404, "<html><body><h1>404 Not Found</h1></body></html>");
    };
    let ct = f.content_type.as_deref().unwrap_or("");
    let mut a = Answer::raw(f.status, f.body.clone(), ct);
    if let Some(cd) = &f.content_disposition {
        a = a.header("Content-Disposition", cd);
    }
    if f.chunked {
        a = a.header("Transfer-Encoding", "chunked");
    }
    a
}

/// `GET /arxiv/pdf/<id>[vN][.pdf]` (and `/arxiv/abs/<id>`, which only says whether it exists).
pub(crate) fn arxiv_get(st: &super::State, base: &str, req: &Recorded) -> Answer {
    let rest = req.path.strip_prefix("/arxiv/").unwrap_or("");
    let (kind, id) = rest.split_once('/').unwrap_or((rest, ""));
    if kind == "pdf" {
        if let Some(stripped) = id.strip_suffix(".pdf") {
            return Answer::empty(301).header("Location", format!("{base}/arxiv/pdf/{stripped}"));
        }
    }
    let (base_id, version) = split_version(id);
    let Some(versions) = st.web.arxiv.get(base_id) else {
        return html(
            404,
            &format!("<html><body><h1>Article identifier '{id}' not recognized</h1></body></html>"),
        );
    };
    let Some((&latest, _)) = versions.last_key_value() else {
        return html(404, "<html><body><h1>Not found</h1></body></html>");
    };
    let entry = match version {
        Some(v) => versions.get(&v),
        None if kind == "pdf" && st.web.arxiv_redirect_unversioned => {
            return Answer::empty(302)
                .header("Location", format!("{base}/arxiv/pdf/{base_id}v{latest}"));
        }
        None => versions.get(&latest),
    };
    let Some(entry) = entry else {
        return html(
            404,
            &format!("<html><body><h1>Version of '{id}' not found</h1></body></html>"),
        );
    };
    match (kind, entry) {
        ("pdf", ArxivEntry::Pdf(b)) => Answer::raw(200, b.clone(), "application/pdf"),
        ("pdf", ArxivEntry::Page(h)) => html(200, h),
        ("abs", _) => html(
            200,
            &format!("<html><head><title>[{id}]</title></head></html>"),
        ),
        _ => html(404, "<html><body><h1>Not found</h1></body></html>"),
    }
}

impl Emulator {
    /// Serves `file` at `{uri}/web{path}` (`path` is below `/web`; `/web/x` works too).
    pub fn serve(&self, path: &str, file: HostedFile) {
        let mut st = self.state.lock().unwrap();
        st.web.files.insert(web_path(path), file);
    }

    /// Answers `{uri}/web{from}` with `status` (301, 302, 303, 307, 308) and this `Location`,
    /// written as given (absolute, or relative like `/web/next` or `next`). Chains and loops
    /// are made of several redirects.
    pub fn redirect(&self, from: &str, to_location: &str, status: u16) {
        let mut st = self.state.lock().unwrap();
        st.web
            .redirects
            .insert(web_path(from), (to_location.to_string(), status));
    }

    /// The absolute URL of a path on the fake web host.
    pub fn web_url(&self, path: &str) -> String {
        format!("{}/web{}", self.uri(), web_path(path))
    }

    /// The fake arXiv's base (use as `ZOTERO_ARXIV_BASE`): PDFs are at `{base}/pdf/<id>`.
    pub fn arxiv_base(&self) -> String {
        format!("{}/arxiv", self.uri())
    }

    /// Registers a PDF for an arXiv id. `1706.03762v2` is that version; an id without a version
    /// becomes the next one (v1 first). Unversioned requests get the latest version.
    pub fn add_arxiv(&self, id: &str, pdf: impl Into<Vec<u8>>) {
        self.add_arxiv_version(id, ArxivEntry::Pdf(pdf.into()));
    }

    /// Like [`Emulator::add_arxiv`], but `/pdf/<id>` answers this HTML page (200 `text/html`),
    /// as arXiv does for withdrawn papers or PDFs still being built.
    pub fn add_arxiv_page(&self, id: &str, html: &str) {
        self.add_arxiv_version(id, ArxivEntry::Page(html.to_string()));
    }

    /// `true`: `/pdf/<id>` without a version redirects (302) to the latest `/pdf/<id>vN`
    /// instead of serving it directly.
    pub fn arxiv_redirect_unversioned(&self, on: bool) {
        self.state.lock().unwrap().web.arxiv_redirect_unversioned = on;
    }

    fn add_arxiv_version(&self, id: &str, entry: ArxivEntry) {
        let (base, version) = split_version(id);
        let mut st = self.state.lock().unwrap();
        let versions = st.web.arxiv.entry(base.to_string()).or_default();
        let v = version.unwrap_or_else(|| versions.keys().last().map_or(1, |v| v + 1));
        versions.insert(v, entry);
    }
}
