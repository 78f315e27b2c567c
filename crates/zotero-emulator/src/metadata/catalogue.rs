//! The default catalogue (`fixtures/metadata/`, real-shaped answers of each service; see
//! `fixtures/README.md`) and a builder for the tests' own Crossref works.

use serde_json::{json, Value};

use super::super::HostedFile;
use super::MetaState;

macro_rules! fixture {
    ($path:literal) => {
        include_str!(concat!("../../../../fixtures/metadata/", $path))
    };
}

const CROSSREF: &[&str] = &[
    fixture!("crossref/10.1038_nature12373.json"),
    fixture!("crossref/10.1038_nature14539.json"),
    fixture!("crossref/10.1038_sdata.2016.18.json"),
    fixture!("crossref/10.1007_978-3-319-24574-4_28.json"),
    fixture!("crossref/10.1109_cvpr.2016.90.json"),
    fixture!("crossref/10.1023_a-1026654312961.json"),
    // Update relations (`updated-by` / `update-to`): a retraction, its notice, a correction,
    // an expression of concern.
    fixture!("crossref/10.5555_emu.retracted.2019.json"),
    fixture!("crossref/10.5555_emu.retraction-notice.2021.json"),
    fixture!("crossref/10.5555_emu.corrected.2020.json"),
    fixture!("crossref/10.5555_emu.concern.2018.json"),
];

const DATACITE: &[&str] = &[
    fixture!("datacite/10.48550_arxiv.1706.03762.json"),
    fixture!("datacite/10.5072_zenodo.8142113.json"),
];

const ARXIV: &[&str] = &[
    fixture!("arxiv/1706.03762.atom"),
    fixture!("arxiv/1512.03385.atom"),
    fixture!("arxiv/hep-th_9711200.atom"),
];

const OPENLIBRARY: &[&str] = &[
    fixture!("openlibrary/9780131103627.json"),
    fixture!("openlibrary/9780465026852.json"),
];

const ESUMMARY: &[&str] = &[
    fixture!("ncbi/esummary_23903748.json"),
    fixture!("ncbi/esummary_26017442.json"),
    fixture!("ncbi/esummary_26978244.json"),
];

const IDCONV: &[&str] = &[
    fixture!("ncbi/idconv_PMC4221854.json"),
    fixture!("ncbi/idconv_PMC4792175.json"),
];

const UNPAYWALL: &[&str] = &[
    fixture!("unpaywall/10.1038_nature12373.json"),
    fixture!("unpaywall/10.1038_nature14539.json"),
    fixture!("unpaywall/10.1038_sdata.2016.18.json"),
    fixture!("unpaywall/10.1007_978-3-319-24574-4_28.json"),
    fixture!("unpaywall/10.1109_cvpr.2016.90.json"),
];

/// A small citation graph of real works (ids and counts made up; see `fixtures/README.md`).
const OPENALEX: &str = fixture!("openalex/works.json");

fn parse(text: &str) -> Value {
    serde_json::from_str(text).expect("fixtures/metadata holds valid JSON")
}

/// A small well-formed PDF whose only page says `label`.
pub(crate) fn tiny_pdf(label: &str) -> Vec<u8> {
    let text = label.replace(['(', ')', '\\'], " ");
    let content = format!("BT /F1 12 Tf 72 720 Td ({text}) Tj ET");
    let objects = [
        "<< /Type /Catalog /Pages 2 0 R >>".to_string(),
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_string(),
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R \
         /Resources << /Font << /F1 5 0 R >> >> >>"
            .to_string(),
        format!(
            "<< /Length {} >>\nstream\n{content}\nendstream",
            content.len()
        ),
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".to_string(),
    ];
    let mut pdf = String::from("%PDF-1.4\n");
    let mut offsets = Vec::new();
    for (i, o) in objects.iter().enumerate() {
        offsets.push(pdf.len());
        pdf.push_str(&format!("{} 0 obj\n{o}\nendobj\n", i + 1));
    }
    let xref = pdf.len();
    pdf.push_str(&format!(
        "xref\n0 {}\n0000000000 65535 f \n",
        objects.len() + 1
    ));
    for off in offsets {
        pdf.push_str(&format!("{off:010} 00000 n \n"));
    }
    pdf.push_str(&format!(
        "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
        objects.len() + 1
    ));
    pdf.into_bytes()
}

impl MetaState {
    /// The catalogue of `fixtures/metadata/`.
    pub(crate) fn catalogue() -> MetaState {
        let mut m = MetaState::empty();
        for t in CROSSREF {
            m.add_crossref(parse(t));
        }
        for t in DATACITE {
            m.add_datacite(parse(t));
        }
        for t in ARXIV {
            for (id, v, entry) in super::arxiv_api::entries(t) {
                m.arxiv.insert(id, (v, entry));
            }
        }
        for t in OPENLIBRARY {
            if let Value::Object(books) = parse(t) {
                for (_, b) in books {
                    m.add_book(b);
                }
            }
        }
        for t in ESUMMARY {
            let v = parse(t);
            for uid in v["result"]["uids"].as_array().into_iter().flatten() {
                let uid = uid.as_str().unwrap_or_default();
                m.add_pubmed(v["result"][uid].clone());
            }
        }
        for t in IDCONV {
            for r in parse(t)["records"].as_array().into_iter().flatten() {
                let mut r = r.clone();
                if let Some(o) = r.as_object_mut() {
                    o.remove("requested-id");
                }
                m.pmc.push(r);
            }
        }
        for t in UNPAYWALL {
            m.add_unpaywall(parse(t));
        }
        for w in parse(OPENALEX)["results"].as_array().into_iter().flatten() {
            m.add_openalex(w.clone());
        }
        for (path, label) in [
            (
                "pmc/PMC4221854.pdf",
                "Kucsko et al. 2013, author manuscript (PMC4221854)",
            ),
            (
                "sdata201618.pdf",
                "Wilkinson et al. 2016, Scientific Data 3:160018",
            ),
            ("pmc/PMC4792175.pdf", "Wilkinson et al. 2016 (PMC4792175)"),
        ] {
            m.oa.insert(path.to_string(), HostedFile::pdf(tiny_pdf(label)));
        }
        // A repository "PDF" link that answers its HTML landing page, as many do.
        m.oa.insert(
            "arxiv/1505.04597.pdf".to_string(),
            HostedFile::new(
                b"<!DOCTYPE html><html><head><title>[1505.04597] U-Net</title></head>\
                  <body><p>Download PDF</p></body></html>"
                    .to_vec(),
                "text/html; charset=utf-8",
            ),
        );
        m
    }
}

/// A Crossref `journal-article` work in the shape of `GET /works/{doi}`'s `message`, for the
/// tests' own catalogues: `authors` are (given, family); the journal, volume, issue and pages
/// are made up from the DOI. Change any field before [`crate::Emulator::add_crossref_work`].
pub fn crossref_article(doi: &str, title: &str, authors: &[(&str, &str)], year: i32) -> Value {
    let n = doi
        .bytes()
        .fold(0u32, |h, b| h.wrapping_mul(31).wrapping_add(u32::from(b)));
    let first = 1 + n % 900;
    let author: Vec<Value> = authors
        .iter()
        .enumerate()
        .map(|(i, (given, family))| {
            json!({
                "given": given,
                "family": family,
                "sequence": if i == 0 { "first" } else { "additional" },
                "affiliation": [],
            })
        })
        .collect();
    json!({
        "DOI": doi.to_lowercase(),
        "URL": format!("https://doi.org/{}", doi.to_lowercase()),
        "type": "journal-article",
        "title": [title],
        "author": author,
        "container-title": ["Journal of Emulated Results"],
        "short-container-title": ["J. Emul. Res."],
        "publisher": "Emulated Society Press",
        "volume": (1 + n % 40).to_string(),
        "issue": (1 + n % 12).to_string(),
        "page": format!("{first}-{}", first + 9),
        "ISSN": ["1234-5679", "2345-678X"],
        "issn-type": [{"type": "print", "value": "1234-5679"}, {"type": "electronic", "value": "2345-678X"}],
        "issued": {"date-parts": [[year, 1 + n % 12]]},
        "published": {"date-parts": [[year, 1 + n % 12]]},
        "published-print": {"date-parts": [[year, 1 + n % 12]]},
        "language": "en",
        "prefix": doi.split('/').next().unwrap_or(""),
        "member": "99999",
        "source": "Crossref",
        "reference-count": 0,
        "references-count": 0,
        "is-referenced-by-count": 0,
        "resource": {"primary": {"URL": format!("https://journal.example.org/{}", doi.to_lowercase())}},
        "link": [],
        "subject": [],
        "relation": {},
        "score": 1,
    })
}
