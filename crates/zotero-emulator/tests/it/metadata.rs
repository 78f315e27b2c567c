//! Self-test of the emulator's fake metadata hosts (doi.org content negotiation, Crossref,
//! DataCite, arXiv's API, Open Library, NCBI esummary and the PMC id converter, Unpaywall, the
//! open-access copies): the services' answer shapes and errors, the catalogue of
//! `fixtures/metadata/`, the tests' own works, injected and enforced rate limits, and what is
//! recorded of each request. A plain hyper client, which does not follow redirects.

use std::time::Duration;

use bytes::Bytes;
use serde_json::{json, Value};

use zotero_emulator::testing::{send, Resp};
use zotero_emulator::{
    crossref_article, ArxivPaper, Emulator, Fault, FaultKind, HostedFile, MetadataHost, RetryAfter,
};

const CSL: &str = "application/vnd.citationstyles.csl+json";

async fn get(emu: &Emulator, url: &str, headers: &[(&str, &str)]) -> Resp {
    send(emu, "GET", url, headers, Bytes::new()).await.unwrap()
}

/// Follows redirects (at most 5), as the server's client does.
async fn follow(emu: &Emulator, url: &str, headers: &[(&str, &str)]) -> (Resp, Vec<u16>) {
    let mut url = url.to_string();
    let mut hops = Vec::new();
    for _ in 0..5 {
        let r = get(emu, &url, headers).await;
        if !(300..400).contains(&r.status) {
            return (r, hops);
        }
        hops.push(r.status);
        url = r.header("location").unwrap();
    }
    panic!("too many redirects at {url}");
}

fn fixture(path: &str) -> Value {
    let p = format!(
        "{}/../../fixtures/metadata/{path}",
        env!("CARGO_MANIFEST_DIR")
    );
    serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap()
}

fn count(haystack: &str, needle: &str) -> usize {
    haystack.matches(needle).count()
}

#[tokio::test]
async fn hosts_are_served_under_their_roots() {
    let emu = Emulator::start().await;
    let uri = emu.uri();
    assert_eq!(emu.doi_base(), format!("{uri}/doi"));
    assert_eq!(emu.crossref_base(), format!("{uri}/crossref"));
    assert_eq!(emu.datacite_base(), format!("{uri}/datacite"));
    assert_eq!(emu.arxiv_api_base(), format!("{uri}/arxiv-api"));
    assert_eq!(emu.openlibrary_base(), format!("{uri}/openlibrary"));
    assert_eq!(emu.ncbi_base(), format!("{uri}/ncbi"));
    assert_eq!(emu.unpaywall_base(), format!("{uri}/unpaywall"));
    assert_eq!(emu.oa_url("/x.pdf"), format!("{uri}/oa/x.pdf"));
    for h in MetadataHost::ALL {
        assert_eq!(emu.metadata_base(h), format!("{uri}{}", h.root()));
        assert_eq!(MetadataHost::of_path(&format!("{}/x", h.root())), Some(h));
    }
    // The fake arXiv PDF host and the API are different hosts.
    assert_eq!(MetadataHost::of_path("/arxiv/pdf/1706.03762"), None);
    assert_eq!(MetadataHost::of_path("/doix/10.1/x"), None);
    // They are not the Zotero API: no key needed, no Zotero headers.
    let r = get(
        &emu,
        &format!("{}/works/10.1038/nature12373", emu.crossref_base()),
        &[],
    )
    .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("zotero-api-version"), None);
    // Only GET and HEAD.
    let url = format!("{}/works/10.1038/nature12373", emu.crossref_base());
    assert_eq!(
        send(&emu, "POST", &url, &[], "x").await.unwrap().status,
        405
    );
    assert_eq!(
        send(&emu, "HEAD", &url, &[], Bytes::new())
            .await
            .unwrap()
            .status,
        200
    );
}

#[tokio::test]
async fn doi_content_negotiation_redirects_to_the_agency() {
    let emu = Emulator::start().await;
    let doi = emu.doi_base();
    let accept = [("Accept", CSL)];

    // A Crossref DOI: to Crossref's transform, which answers CSL-JSON.
    let r = get(&emu, &format!("{doi}/10.1038/nature12373"), &accept).await;
    assert_eq!(r.status, 302);
    let loc = r.header("location").unwrap();
    assert_eq!(
        loc,
        format!(
            "{}/works/10.1038/nature12373/transform/{CSL}",
            emu.crossref_base()
        )
    );
    let (r, hops) = follow(&emu, &format!("{doi}/10.1038/nature12373"), &accept).await;
    assert_eq!((r.status, hops), (200, vec![302]));
    assert_eq!(r.header("content-type").as_deref(), Some(CSL));
    let c = r.json();
    assert_eq!(c["type"], "article-journal");
    assert_eq!(c["title"], "Nanometre-scale thermometry in a living cell");
    assert_eq!(c["container-title"], "Nature");
    assert_eq!(c["container-title-short"], "Nature");
    assert_eq!(c["ISSN"], json!(["0028-0836", "1476-4687"]));
    assert_eq!(
        (
            c["volume"].as_str(),
            c["issue"].as_str(),
            c["page"].as_str()
        ),
        (Some("500"), Some("7460"), Some("54-58"))
    );
    assert_eq!(c["author"].as_array().unwrap().len(), 8);
    assert_eq!(c["issued"]["date-parts"], json!([[2013, 7, 31]]));

    // A DataCite DOI, in any case: to DataCite's content resolver.
    let (r, _) = follow(&emu, &format!("{doi}/10.48550/ARXIV.1706.03762"), &accept).await;
    assert_eq!(r.status, 200);
    let c = r.json();
    assert_eq!(
        (c["type"].as_str(), c["DOI"].as_str()),
        (Some("article"), Some("10.48550/ARXIV.1706.03762"))
    );
    assert_eq!(
        c["author"][0],
        json!({"family": "Vaswani", "given": "Ashish"})
    );
    assert_eq!(c["publisher"], "arXiv");
    let r = get(&emu, &format!("{doi}/10.48550/arXiv.1706.03762"), &accept).await;
    assert!(r
        .header("location")
        .unwrap()
        .starts_with(&format!("{}/{CSL}/", emu.datacite_base())));

    // URL-encoded, with a colon; the older citeproc name; a q-ranked list.
    for (path, acc) in [
        ("10.1023%2FA%3A1026654312961", CSL),
        ("10.1023/A:1026654312961", "application/citeproc+json"),
        (
            "10.1023/a:1026654312961",
            "application/x-bibtex;q=0.5, application/vnd.citationstyles.csl+json",
        ),
    ] {
        let (r, _) = follow(&emu, &format!("{doi}/{path}"), &[("Accept", acc)]).await;
        assert_eq!(r.status, 200, "{path}");
        assert_eq!(
            r.json()["container-title"],
            "International Journal of Theoretical Physics"
        );
    }

    // A browser (or no Accept): the registered landing page.
    for h in [
        vec![("Accept", "text/html")],
        vec![],
        vec![("Accept", "*/*")],
    ] {
        let r = get(&emu, &format!("{doi}/10.1038/nature12373"), &h).await;
        assert_eq!(r.status, 302);
        assert_eq!(
            r.header("location").as_deref(),
            Some("https://www.nature.com/articles/nature12373")
        );
    }
    // Another metadata type goes to the agency, whose fake only makes CSL-JSON.
    let (r, hops) = follow(
        &emu,
        &format!("{doi}/10.1038/nature12373"),
        &[("Accept", "application/x-bibtex")],
    )
    .await;
    assert_eq!((r.status, hops.len()), (406, 1));

    // Unknown DOIs.
    for d in ["10.1038/nope", "10.9999/x", "not-a-doi"] {
        let r = get(&emu, &format!("{doi}/{d}"), &accept).await;
        assert_eq!(r.status, 404, "{d}");
        assert!(r.text().contains("DOI Not Found"));
    }
    // The redirect status is the test's to choose.
    emu.doi_redirect_status(303);
    let r = get(&emu, &format!("{doi}/10.1038/nature12373"), &accept).await;
    assert_eq!(r.status, 303);
}

#[tokio::test]
async fn every_catalogue_csl_fixture_is_what_content_negotiation_answers() {
    let emu = Emulator::start().await;
    let dir = format!("{}/../../fixtures/metadata/csl", env!("CARGO_MANIFEST_DIR"));
    let mut n = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        let want = fixture(&format!("csl/{name}"));
        let doi = want["DOI"].as_str().unwrap();
        let (r, _) = follow(
            &emu,
            &format!("{}/{doi}", emu.doi_base()),
            &[("Accept", CSL)],
        )
        .await;
        assert_eq!(r.status, 200, "{doi}");
        assert_eq!(r.json(), want, "{name}");
        n += 1;
    }
    assert_eq!(n, 8);
}

#[tokio::test]
async fn crossref_works_have_the_rest_api_shape() {
    let emu = Emulator::start().await;
    let cr = emu.crossref_base();
    let r = get(&emu, &format!("{cr}/works/10.1038/nature12373"), &[]).await;
    assert_eq!(
        (r.status, r.header("content-type").as_deref()),
        (200, Some("application/json"))
    );
    assert_eq!(r.header("x-rate-limit-limit").as_deref(), Some("5"));
    assert_eq!(r.header("x-rate-limit-interval").as_deref(), Some("1s"));
    assert_eq!(r.header("x-api-pool").as_deref(), Some("public"));
    let v = r.json();
    assert_eq!(
        (v["status"].as_str(), v["message-type"].as_str()),
        (Some("ok"), Some("work"))
    );
    let m = &v["message"];
    assert_eq!(m["DOI"], "10.1038/nature12373");
    assert_eq!(m["type"], "journal-article");
    assert_eq!(
        m["title"],
        json!(["Nanometre-scale thermometry in a living cell"])
    );
    assert_eq!(m["container-title"], json!(["Nature"]));
    assert_eq!(
        m["author"][0],
        json!({"given": "G.", "family": "Kucsko", "sequence": "first", "affiliation": []})
    );
    assert_eq!(m["published"]["date-parts"], json!([[2013, 7, 31]]));
    assert!(m["abstract"].as_str().unwrap().starts_with("<jats:p>"));
    assert!(m["link"]
        .as_array()
        .unwrap()
        .iter()
        .any(|l| l["content-type"] == "application/pdf"));

    // The polite pool: `mailto` or a `mailto:` in the User-Agent.
    let r = get(
        &emu,
        &format!("{cr}/works/10.1038/nature12373?mailto=me@uni.edu"),
        &[],
    )
    .await;
    assert_eq!(
        (
            r.header("x-rate-limit-limit").as_deref(),
            r.header("x-api-pool").as_deref()
        ),
        (Some("10"), Some("polite"))
    );
    let ua = [(
        "User-Agent",
        "zotero-mcp/0.1 (https://github.com/x/zotero-mcp; mailto:me@uni.edu)",
    )];
    let r = get(&emu, &format!("{cr}/works/10.1038/nature12373"), &ua).await;
    assert_eq!(r.header("x-api-pool").as_deref(), Some("polite"));

    // The 53 authors of a PubMed paper, with ORCIDs and a particle.
    let m = get(&emu, &format!("{cr}/works/10.1038/sdata.2016.18"), &[])
        .await
        .json()["message"]
        .clone();
    let authors = m["author"].as_array().unwrap();
    assert_eq!(authors.len(), 53);
    assert_eq!(authors[0]["ORCID"], "https://orcid.org/0000-0001-6960-357X");
    assert!(authors.iter().any(|a| a["family"] == "'t Hoen"));
    assert_eq!(
        (m["article-number"].as_str(), m.get("page")),
        (Some("160018"), None)
    );

    // A book chapter (editors, ISBN, series ISSN) and a conference paper; any case, encoded.
    let m = get(
        &emu,
        &format!("{cr}/works/10.1007%2F978-3-319-24574-4_28"),
        &[],
    )
    .await
    .json()["message"]
        .clone();
    assert_eq!(m["type"], "book-chapter");
    assert_eq!(m["editor"].as_array().unwrap().len(), 4);
    assert_eq!(m["ISBN"], json!(["9783319245737", "9783319245744"]));
    assert_eq!(
        m["container-title"][1],
        "Medical Image Computing and Computer-Assisted Intervention – MICCAI 2015"
    );
    let m = get(&emu, &format!("{cr}/v1/works/10.1109/CVPR.2016.90"), &[])
        .await
        .json()["message"]
        .clone();
    assert_eq!(
        (m["type"].as_str(), m["DOI"].as_str()),
        (Some("proceedings-article"), Some("10.1109/cvpr.2016.90"))
    );
    assert_eq!(m["event"]["location"], "Las Vegas, NV, USA");

    // Unknown works, and DataCite's.
    for d in ["10.1038/nope", "10.48550/arXiv.1706.03762"] {
        let r = get(&emu, &format!("{cr}/works/{d}"), &[]).await;
        assert_eq!(
            (r.status, r.text().as_str()),
            (404, "Resource not found."),
            "{d}"
        );
        assert!(r.header("x-rate-limit-limit").is_some());
    }
    let r = get(
        &emu,
        &format!("{cr}/works/10.48550/arXiv.1706.03762/agency"),
        &[],
    )
    .await;
    assert_eq!(r.json()["message"]["agency"]["id"], "datacite");
    let r = get(&emu, &format!("{cr}/works/10.1038/nature12373/agency"), &[]).await;
    assert_eq!(r.json()["message"]["agency"]["id"], "crossref");
    // `transform` without a type takes it from Accept.
    let r = get(
        &emu,
        &format!("{cr}/works/10.1038/nature12373/transform"),
        &[("Accept", CSL)],
    )
    .await;
    assert_eq!(
        (r.status, r.json()["type"].as_str()),
        (200, Some("article-journal"))
    );
}

#[tokio::test]
async fn datacite_dois_have_the_json_api_shape() {
    let emu = Emulator::start().await;
    let dc = emu.datacite_base();
    let r = get(&emu, &format!("{dc}/dois/10.5072/zenodo.8142113"), &[]).await;
    assert_eq!(r.status, 200);
    assert_eq!(
        r.header("content-type").as_deref(),
        Some("application/vnd.api+json; charset=utf-8")
    );
    let d = r.json()["data"].clone();
    assert_eq!(
        (d["id"].as_str(), d["type"].as_str()),
        (Some("10.5072/zenodo.8142113"), Some("dois"))
    );
    let a = &d["attributes"];
    assert_eq!(a["types"]["resourceTypeGeneral"], "Dataset");
    assert_eq!(a["types"]["citeproc"], "dataset");
    assert_eq!(a["publicationYear"], 2023);
    assert_eq!(a["creators"][0]["familyName"], "Carberry");
    assert_eq!(
        a["creators"][1],
        json!({"name": "Alpine Climate Data Group", "nameType": "Organizational", "affiliation": [], "nameIdentifiers": []})
    );
    assert_eq!(a["descriptions"][0]["descriptionType"], "Abstract");
    let r = get(&emu, &format!("{dc}/dois/10.48550/arXiv.1706.03762"), &[]).await;
    assert_eq!(
        r.json()["data"]["attributes"]["types"]["resourceTypeGeneral"],
        "Preprint"
    );
    // `Accept` asks for CSL-JSON.
    let r = get(
        &emu,
        &format!("{dc}/dois/10.5072/zenodo.8142113"),
        &[("Accept", CSL)],
    )
    .await;
    let c = r.json();
    assert_eq!(
        (c["type"].as_str(), c["title"].as_str()),
        (
            Some("dataset"),
            Some("Monthly station temperature records for the Alps, 1950–2020")
        )
    );
    assert_eq!(
        c["author"][1],
        json!({"literal": "Alpine Climate Data Group"})
    );
    // Unknown (and Crossref's).
    for d in ["10.5072/nope", "10.1038/nature12373"] {
        let r = get(&emu, &format!("{dc}/dois/{d}"), &[]).await;
        assert_eq!(r.status, 404);
        assert_eq!(r.json()["errors"][0]["status"], "404");
    }
}

#[tokio::test]
async fn arxiv_api_answers_atom_feeds() {
    let emu = Emulator::start().await;
    let q = |ids: &str| format!("{}/api/query?id_list={ids}", emu.arxiv_api_base());
    let r = get(&emu, &q("1706.03762"), &[]).await;
    assert_eq!(
        r.header("content-type").as_deref(),
        Some("application/atom+xml; charset=utf-8")
    );
    let t = r.text();
    assert!(t.contains("<opensearch:totalResults xmlns:opensearch=\"http://a9.com/-/spec/opensearch/1.1/\">1</opensearch:totalResults>"));
    assert!(t.contains("<id>http://arxiv.org/abs/1706.03762v7</id>"));
    assert!(t.contains("<title>Attention Is All You Need</title>"));
    assert_eq!(count(&t, "<author>"), 8);
    assert!(!t.contains("arxiv:doi"));
    assert!(t.contains("<link title=\"pdf\" href=\"http://arxiv.org/pdf/1706.03762v7\""));
    assert!(t.contains(
        "<arxiv:primary_category xmlns:arxiv=\"http://arxiv.org/schemas/atom\" term=\"cs.CL\""
    ));

    // An old-style id with a journal DOI, journal ref and affiliation; a given version.
    let t = get(&emu, &q("hep-th/9711200"), &[]).await.text();
    assert!(t.contains(">10.1023/A:1026654312961</arxiv:doi>"));
    assert!(t.contains(">Adv.Theor.Math.Phys.2:231-252,1998</arxiv:journal_ref>"));
    assert!(t.contains(">Harvard University</arxiv:affiliation>"));
    let t = get(&emu, &q("1706.03762v2"), &[]).await.text();
    assert!(t.contains("<id>http://arxiv.org/abs/1706.03762v2</id>"));
    assert!(t.contains("href=\"http://arxiv.org/pdf/1706.03762v2\""));

    // Several ids; an unknown one is left out; a malformed one is an `Error` entry.
    let t = get(&emu, &q("1706.03762,2401.99999,1512.03385"), &[])
        .await
        .text();
    assert_eq!(count(&t, "<entry>"), 2);
    assert!(t.contains(">2</opensearch:totalResults>"));
    let t = get(&emu, &q("2401.99999"), &[]).await.text();
    assert_eq!(
        (
            count(&t, "<entry>"),
            t.contains(">0</opensearch:totalResults>")
        ),
        (0, true)
    );
    for bad in ["1234.123", "nonsense", "hep-th/97112"] {
        let r = get(&emu, &q(bad), &[]).await;
        assert_eq!(r.status, 200);
        let t = r.text();
        assert!(t.contains("<title>Error</title>"), "{bad}");
        assert!(t.contains(&format!("<summary>incorrect id format for {bad}</summary>")));
        assert!(t.contains(">1</opensearch:totalResults>"));
    }

    // The tests' own papers; `max_results` (10 by default) pages an id_list too.
    let mut ids = Vec::new();
    for i in 0..12 {
        let id = format!("2403.{:05}", 100 + i);
        let mut p = ArxivPaper::new(&id, &format!("Paper number {i} & friends"));
        p.version = 2;
        if i == 0 {
            p.doi = Some("10.1000/j.x.2024.01".into());
            p.journal_ref = Some("J. X 1 (2024) 1-10".into());
            p.authors
                .push(("Émilie du Châtelet".into(), Some("Cirey".into())));
        }
        emu.add_arxiv_entry(&p);
        ids.push(id);
    }
    let t = get(&emu, &q(&ids.join(",")), &[]).await.text();
    assert_eq!(count(&t, "<entry>"), 10);
    assert!(t.contains(">12</opensearch:totalResults>"));
    assert!(t.contains("Paper number 0 &amp; friends"));
    assert!(t.contains("<name>Émilie du Châtelet</name>"));
    let t = get(
        &emu,
        &format!("{}&start=10&max_results=10", q(&ids.join(","))),
        &[],
    )
    .await
    .text();
    assert_eq!(count(&t, "<entry>"), 2);
    emu.add_arxiv_atom(
        &get(&emu, &q("1512.03385"), &[])
            .await
            .text()
            .replace("1512.03385", "1512.09999"),
    );
    assert!(get(&emu, &q("1512.09999"), &[])
        .await
        .text()
        .contains("<id>http://arxiv.org/abs/1512.09999v1</id>"));

    // The catalogue's PDFs on the fake arXiv PDF host, on request.
    assert_eq!(
        get(&emu, &format!("{}/pdf/1706.03762", emu.arxiv_base()), &[])
            .await
            .status,
        404
    );
    emu.add_catalogue_arxiv_pdfs();
    let r = get(
        &emu,
        &format!("{}/pdf/hep-th/9711200", emu.arxiv_base()),
        &[],
    )
    .await;
    assert!((r.status == 200) && r.body.starts_with(b"%PDF-"));
}

#[tokio::test]
async fn openlibrary_books_api() {
    let emu = Emulator::start().await;
    let ol = emu.openlibrary_base();
    let r = get(
        &emu,
        &format!("{ol}/api/books?bibkeys=ISBN:9780131103627&format=json&jscmd=data"),
        &[],
    )
    .await;
    assert_eq!(
        (r.status, r.header("content-type").as_deref()),
        (200, Some("application/json"))
    );
    let v = r.json();
    let b = &v["ISBN:9780131103627"];
    assert_eq!(b["title"], "The C programming language");
    assert_eq!(b["authors"][1]["name"], "Dennis M. Ritchie");
    assert_eq!(b["publishers"][0]["name"], "Prentice Hall");
    assert_eq!(
        (b["publish_date"].as_str(), b["number_of_pages"].as_u64()),
        (Some("1988"), Some(272))
    );
    assert_eq!(b["identifiers"]["isbn_10"][0], "0131103628");
    // An ISBN-10 with hyphens finds the same edition, under the key as asked; two at once;
    // unknown ones are left out.
    let v = get(&emu, &format!("{ol}/api/books?bibkeys=ISBN:0-465-02685-0,ISBN:0131103628,ISBN:9780000000002&format=json&jscmd=data"), &[]).await.json();
    assert_eq!(v.as_object().unwrap().len(), 2);
    assert_eq!(
        v["ISBN:0-465-02685-0"]["subtitle"],
        "an eternal golden braid"
    );
    assert_eq!(v["ISBN:0131103628"]["title"], "The C programming language");
    let r = get(
        &emu,
        &format!("{ol}/api/books?bibkeys=ISBN:9780000000002&format=json&jscmd=data"),
        &[],
    )
    .await;
    assert_eq!((r.status, r.text().as_str()), (200, "{}"));
    // Without format=json: JavaScript; without jscmd=data: the viewapi shape.
    let r = get(
        &emu,
        &format!("{ol}/api/books?bibkeys=ISBN:9780131103627&jscmd=data"),
        &[],
    )
    .await;
    assert!(r.text().starts_with("var _OLBookInfo = {"));
    let v = get(
        &emu,
        &format!("{ol}/api/books?bibkeys=ISBN:9780131103627&format=json"),
        &[],
    )
    .await
    .json();
    assert_eq!(v["ISBN:9780131103627"]["preview"], "noview");
    assert!(v["ISBN:9780131103627"].get("title").is_none());
}

#[tokio::test]
async fn ncbi_esummary_and_pmc_id_converter() {
    let emu = Emulator::start().await;
    let n = emu.ncbi_base();
    let es = |q: &str| {
        format!("{n}/entrez/eutils/esummary.fcgi?db=pubmed&retmode=json&tool=zotero-mcp&email=me%40uni.edu&{q}")
    };
    let r = get(&emu, &es("id=26978244"), &[]).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("x-ratelimit-limit").as_deref(), Some("3"));
    let v = r.json();
    assert_eq!(v["header"]["type"], "esummary");
    assert_eq!(v["result"]["uids"], json!(["26978244"]));
    let s = &v["result"]["26978244"];
    assert_eq!(
        s["title"],
        "The FAIR Guiding Principles for scientific data management and stewardship."
    );
    assert_eq!(
        (s["source"].as_str(), s["fulljournalname"].as_str()),
        (Some("Sci Data"), Some("Scientific data"))
    );
    assert_eq!(s["authors"].as_array().unwrap().len(), 53);
    assert_eq!(
        s["authors"][0],
        json!({"name": "Wilkinson MD", "authtype": "Author", "clusterid": ""})
    );
    assert_eq!(
        (
            s["pubdate"].as_str(),
            s["pages"].as_str(),
            s["essn"].as_str()
        ),
        (Some("2016 Mar 15"), Some("160018"), Some("2052-4463"))
    );
    let ids = s["articleids"].as_array().unwrap();
    let id = |t: &str| {
        ids.iter()
            .find(|a| a["idtype"] == t)
            .map(|a| a["value"].clone())
    };
    assert_eq!(
        (id("doi"), id("pmc")),
        (
            Some(json!("10.1038/sdata.2016.18")),
            Some(json!("PMC4792175"))
        )
    );
    // Several ids, one unknown; abbreviated page ranges as PubMed writes them.
    let v = get(&emu, &es("id=23903748,99999999,26017442"), &[])
        .await
        .json();
    assert_eq!(
        v["result"]["uids"],
        json!(["23903748", "99999999", "26017442"])
    );
    assert_eq!(v["result"]["23903748"]["pages"], "54-8");
    assert_eq!(
        v["result"]["99999999"],
        json!({"uid": "99999999", "error": "cannot get document summary"})
    );
    assert!(v["result"]["26017442"]["articleids"]
        .as_array()
        .unwrap()
        .iter()
        .all(|a| a["idtype"] != "pmc"));
    let v = get(&emu, &es("id="), &[]).await.json();
    assert_eq!(v["esummaryresult"], json!(["Empty id list - nothing todo"]));
    // XML unless retmode=json.
    let r = get(
        &emu,
        &format!("{n}/entrez/eutils/esummary.fcgi?db=pubmed&id=26017442"),
        &[],
    )
    .await;
    assert!(r.header("content-type").unwrap().starts_with("text/xml"));
    assert!(r
        .text()
        .contains("<Item Name=\"Title\" Type=\"String\">Deep learning.</Item>"));
    // With an API key, 10 a second.
    let r = get(&emu, &es("id=26017442&api_key=abc123"), &[]).await;
    assert_eq!(r.header("x-ratelimit-limit").as_deref(), Some("10"));

    // The PMC id converter, old and new paths; by PMCID, PMID, DOI.
    let v = get(&emu, &format!("{n}/pmc/utils/idconv/v1.0/?ids=PMC4792175&format=json&tool=zotero-mcp&email=me%40uni.edu"), &[]).await.json();
    assert_eq!(v["status"], "ok");
    assert_eq!(
        v["records"],
        json!([{"requested-id": "PMC4792175", "pmcid": "PMC4792175", "pmid": 26978244, "doi": "10.1038/sdata.2016.18"}])
    );
    let v = get(&emu, &format!("{n}/tools/idconv/api/v1/articles/?ids=23903748,10.1038/SDATA.2016.18,PMC9999999,26017442,zzz&format=json"), &[]).await.json();
    let recs = v["records"].as_array().unwrap();
    assert_eq!(recs[0]["pmcid"], "PMC4221854");
    assert_eq!(recs[1]["pmid"], 26978244);
    assert_eq!(
        recs[2],
        json!({"requested-id": "PMC9999999", "status": "error", "errmsg": "Identifier not found in PMC"})
    );
    assert_eq!(
        (recs[3]["status"].as_str(), recs[3]["pmid"].as_u64()),
        (Some("error"), Some(26017442))
    );
    assert_eq!(recs[4]["errmsg"], "Not a valid ID");
    let r = get(
        &emu,
        &format!("{n}/pmc/utils/idconv/v1.0/?ids=PMC4792175"),
        &[],
    )
    .await;
    assert!(r
        .text()
        .contains("<record requested-id=\"PMC4792175\" pmcid=\"PMC4792175\" pmid=\"26978244\""));

    // tool, email and api_key are recorded.
    let reqs = emu.requests_to(MetadataHost::Ncbi);
    assert_eq!(reqs[0].query_param("tool"), Some("zotero-mcp"));
    assert_eq!(reqs[0].query_param("email"), Some("me@uni.edu"));
    assert!(reqs
        .iter()
        .any(|r| r.query_param("api_key") == Some("abc123")));
}

#[tokio::test]
async fn unpaywall_open_access_and_its_refusals() {
    let emu = Emulator::start().await;
    let up = |doi: &str, q: &str| format!("{}/v2/{doi}{q}", emu.unpaywall_base());
    let email = "?email=me@uni.edu";

    // Open access with a PDF, served by the fake open-access host.
    let r = get(&emu, &up("10.1038/nature12373", email), &[]).await;
    assert_eq!(r.status, 200);
    let v = r.json();
    assert_eq!(
        (v["doi"].as_str(), v["is_oa"].as_bool()),
        (Some("10.1038/nature12373"), Some(true))
    );
    let best = &v["best_oa_location"];
    assert_eq!(best["url_for_pdf"], json!(emu.oa_url("pmc/PMC4221854.pdf")));
    assert_eq!(best["host_type"], "repository");
    assert_eq!(v["oa_locations"].as_array().unwrap().len(), 1);
    let pdf = get(&emu, best["url_for_pdf"].as_str().unwrap(), &[]).await;
    assert_eq!(
        pdf.header("content-type").as_deref(),
        Some("application/pdf")
    );
    assert!(pdf.body.starts_with(b"%PDF-1.4") && pdf.body.ends_with(b"%%EOF\n"));
    let v = get(&emu, &up("10.1038/SDATA.2016.18", email), &[])
        .await
        .json();
    assert_eq!(
        (
            v["oa_status"].as_str(),
            v["best_oa_location"]["license"].as_str()
        ),
        (Some("gold"), Some("cc-by"))
    );
    // Closed: recorded, and derived for a Crossref DOI Unpaywall has no record of.
    for d in ["10.1038/nature14539", "10.1023/A:1026654312961"] {
        let v = get(&emu, &up(d, email), &[]).await.json();
        assert_eq!(
            (v["is_oa"].as_bool(), &v["best_oa_location"]),
            (Some(false), &Value::Null),
            "{d}"
        );
        assert_eq!(v["oa_locations"], json!([]));
    }
    // Open without a PDF link; a "PDF" link that answers HTML.
    let v = get(&emu, &up("10.1109/cvpr.2016.90", email), &[])
        .await
        .json();
    assert_eq!(
        (v["is_oa"].as_bool(), &v["best_oa_location"]["url_for_pdf"]),
        (Some(true), &Value::Null)
    );
    let v = get(&emu, &up("10.1007/978-3-319-24574-4_28", email), &[])
        .await
        .json();
    let r = get(
        &emu,
        v["best_oa_location"]["url_for_pdf"].as_str().unwrap(),
        &[],
    )
    .await;
    assert_eq!(
        (r.status, r.header("content-type").as_deref()),
        (200, Some("text/html; charset=utf-8"))
    );

    // No e-mail, or a placeholder: 422. Unknown DOIs (and DataCite's): 404.
    for q in [
        "",
        "?email=",
        "?email=test@example.com",
        "?email=YOUR_EMAIL",
        "?email=nobody",
    ] {
        let r = get(&emu, &up("10.1038/nature12373", q), &[]).await;
        assert_eq!(r.status, 422, "{q}");
        assert_eq!(r.json()["error"], true);
    }
    for d in ["10.1038/nope", "10.48550/arXiv.1706.03762", "nonsense"] {
        assert_eq!(get(&emu, &up(d, email), &[]).await.status, 404, "{d}");
    }

    // The tests' own records and files.
    emu.serve_oa("mine/a.pdf", HostedFile::pdf(b"%PDF-1.7 mine".to_vec()));
    emu.add_unpaywall(json!({"doi": "10.1000/mine", "is_oa": true, "oa_status": "gold",
        "best_oa_location": {"url_for_pdf": "{EMU}/oa/mine/a.pdf", "url": "{EMU}/oa/mine/a.pdf", "host_type": "publisher", "license": "cc0"},
        "oa_locations": []}));
    let v = get(&emu, &up("10.1000/MINE", email), &[]).await.json();
    let url = v["best_oa_location"]["url_for_pdf"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(url, emu.oa_url("mine/a.pdf"));
    assert_eq!(get(&emu, &url, &[]).await.text(), "%PDF-1.7 mine");
    assert_eq!(get(&emu, &emu.oa_url("missing.pdf"), &[]).await.status, 404);
}

#[tokio::test]
async fn injected_faults_hit_one_host_worded_as_it_words_them() {
    let emu = Emulator::start().await;
    let work = format!("{}/works/10.1038/nature12373", emu.crossref_base());
    emu.inject(
        Fault::times(
            FaultKind::RateLimited {
                retry_after: RetryAfter::Seconds(2),
            },
            2,
        )
        .on_host(MetadataHost::Crossref),
    );
    // Another host is not hit.
    let csl = [("Accept", CSL)];
    assert_eq!(
        get(
            &emu,
            &format!("{}/10.1038/nature12373", emu.doi_base()),
            &csl
        )
        .await
        .status,
        302
    );
    let r = get(&emu, &work, &[]).await;
    assert_eq!(
        (r.status, r.header("retry-after").as_deref()),
        (429, Some("2"))
    );
    assert_eq!(r.header("x-rate-limit-limit").as_deref(), Some("5"));
    assert_eq!(r.header("zotero-api-version"), None);
    assert_eq!(get(&emu, &work, &[]).await.status, 429);
    assert_eq!(get(&emu, &work, &[]).await.status, 200);
    assert_eq!(emu.faults_pending(), 0);

    emu.inject(
        Fault::once(FaultKind::Unavailable {
            retry_after: Some(RetryAfter::Seconds(3)),
            backoff: None,
        })
        .on_host(MetadataHost::ArxivApi),
    );
    let r = get(
        &emu,
        &format!("{}/api/query?id_list=1706.03762", emu.arxiv_api_base()),
        &[],
    )
    .await;
    assert_eq!(
        (
            r.status,
            r.text().as_str(),
            r.header("retry-after").as_deref()
        ),
        (503, "Rate exceeded.", Some("3"))
    );

    emu.inject(
        Fault::once(FaultKind::RateLimited {
            retry_after: RetryAfter::Seconds(1),
        })
        .on_host(MetadataHost::Ncbi),
    );
    let r = get(
        &emu,
        &format!(
            "{}/entrez/eutils/esummary.fcgi?db=pubmed&id=26017442&retmode=json",
            emu.ncbi_base()
        ),
        &[],
    )
    .await;
    assert_eq!(r.status, 429);
    assert_eq!(r.json()["error"], "API rate limit exceeded");

    // `Fault::on` filters by path as for any host; other statuses; a slow answer.
    emu.inject(Fault::once(FaultKind::Status(500)).on("/unpaywall/v2/10.1038/nature14539"));
    let up = |d: &str| format!("{}/v2/{d}?email=me@uni.edu", emu.unpaywall_base());
    assert_eq!(get(&emu, &up("10.1038/nature12373"), &[]).await.status, 200);
    assert_eq!(get(&emu, &up("10.1038/nature14539"), &[]).await.status, 500);
    emu.inject(
        Fault::once(FaultKind::Unavailable {
            retry_after: None,
            backoff: None,
        })
        .on_host(MetadataHost::DataCite),
    );
    let r = get(
        &emu,
        &format!("{}/dois/10.5072/zenodo.8142113", emu.datacite_base()),
        &[],
    )
    .await;
    assert_eq!(
        (r.status, r.json()["message"].as_str()),
        (503, Some("Service unavailable"))
    );
    emu.inject(
        Fault::once(FaultKind::Slow(Duration::from_millis(300))).on_host(MetadataHost::OpenLibrary),
    );
    let t0 = std::time::Instant::now();
    let r = get(
        &emu,
        &format!(
            "{}/api/books?bibkeys=ISBN:9780131103627&format=json&jscmd=data",
            emu.openlibrary_base()
        ),
        &[],
    )
    .await;
    assert!(r.status == 200 && t0.elapsed() >= Duration::from_millis(300));
    emu.inject(Fault::once(FaultKind::Drop).on_host(MetadataHost::OpenAccess));
    assert!(send(
        &emu,
        "GET",
        &emu.oa_url("sdata201618.pdf"),
        &[],
        Bytes::new()
    )
    .await
    .is_err());
}

#[tokio::test]
async fn published_rate_limits_can_be_enforced() {
    let emu = Emulator::start().await;
    emu.enforce_rate_limits(true);
    let arxiv = format!("{}/api/query?id_list=1706.03762", emu.arxiv_api_base());
    assert_eq!(get(&emu, &arxiv, &[]).await.status, 200);
    let r = get(&emu, &arxiv, &[]).await;
    assert_eq!((r.status, r.text().as_str()), (503, "Rate exceeded."));

    let es = |q: &str| {
        format!(
            "{}/entrez/eutils/esummary.fcgi?db=pubmed&id=26017442&retmode=json{q}",
            emu.ncbi_base()
        )
    };
    let mut statuses = Vec::new();
    for _ in 0..4 {
        statuses.push(get(&emu, &es(""), &[]).await.status);
    }
    assert_eq!(statuses, [200, 200, 200, 429]);

    let work = format!("{}/works/10.1038/nature12373", emu.crossref_base());
    let mut statuses = Vec::new();
    for _ in 0..6 {
        statuses.push(get(&emu, &work, &[]).await.status);
    }
    assert_eq!(statuses.last(), Some(&429));
    tokio::time::sleep(Duration::from_millis(1100)).await;
    for _ in 0..6 {
        assert_eq!(
            get(&emu, &format!("{work}?mailto=me@uni.edu"), &[])
                .await
                .status,
            200
        );
    }
    assert_eq!(get(&emu, &es("&api_key=k"), &[]).await.status, 200);
    // Hosts without a published limit are never refused.
    for _ in 0..10 {
        assert_eq!(
            get(
                &emu,
                &format!(
                    "{}/v2/10.1038/nature12373?email=me@uni.edu",
                    emu.unpaywall_base()
                ),
                &[]
            )
            .await
            .status,
            200
        );
    }
    emu.enforce_rate_limits(false);
    assert_eq!(get(&emu, &arxiv, &[]).await.status, 200);
}

#[tokio::test]
async fn requests_are_recorded_with_their_time_and_user_agent() {
    let emu = Emulator::start().await;
    let ua = "zotero-mcp/0.1 (https://github.com/x/zotero-mcp; mailto:me@uni.edu)";
    let arxiv = format!("{}/api/query?id_list=1706.03762", emu.arxiv_api_base());
    get(&emu, &arxiv, &[("User-Agent", ua)]).await;
    tokio::time::sleep(Duration::from_millis(120)).await;
    get(&emu, &arxiv, &[("User-Agent", ua)]).await;
    get(
        &emu,
        &format!(
            "{}/works/10.1038/nature12373?mailto=me@uni.edu",
            emu.crossref_base()
        ),
        &[("User-Agent", ua)],
    )
    .await;
    assert_eq!(emu.count_to(MetadataHost::ArxivApi), 2);
    assert_eq!(emu.count_to(MetadataHost::Crossref), 1);
    assert_eq!(emu.count_to(MetadataHost::Doi), 0);
    let reqs = emu.requests_to(MetadataHost::ArxivApi);
    assert!(reqs.iter().all(|r| r.user_agent() == Some(ua)));
    assert_eq!(reqs[0].query_param("id_list"), Some("1706.03762"));
    let gap = emu.min_interval(MetadataHost::ArxivApi).unwrap();
    assert!(gap >= Duration::from_millis(120), "{gap:?}");
    assert!(reqs[1].time >= reqs[0].time);
    assert_eq!(emu.min_interval(MetadataHost::Crossref), None);
    let cr = &emu.requests_to(MetadataHost::Crossref)[0];
    assert_eq!(cr.query_param("mailto"), Some("me@uni.edu"));
    // The web API's own list has them too, in order.
    let all = emu.requests();
    assert_eq!(all.len(), 3);
    assert!(all.windows(2).all(|w| w[0].at <= w[1].at));
    emu.reset_counts();
    assert_eq!(emu.count_to(MetadataHost::ArxivApi), 0);
}

#[tokio::test]
async fn tests_build_their_own_catalogue() {
    let emu = Emulator::start().await;
    emu.clear_metadata();
    let r = get(
        &emu,
        &format!("{}/10.1038/nature12373", emu.doi_base()),
        &[("Accept", CSL)],
    )
    .await;
    assert_eq!(r.status, 404);
    let mut dois = Vec::new();
    for i in 0..25 {
        let doi = format!("10.5555/Emu.{i:03}");
        let mut w = crossref_article(
            &doi,
            &format!("Result {i}"),
            &[("Ada", "Lovelace"), ("Alan", "Turing")],
            2000 + i,
        );
        if i % 5 == 0 {
            w["type"] = json!("book-chapter");
            w["container-title"] = json!(["Series", "A Book"]);
        }
        emu.add_crossref_work(w);
        dois.push(doi);
    }
    emu.add_datacite_doi(fixture("datacite/10.5072_zenodo.8142113.json"));
    emu.add_csl(
        "10.5555/csl-only",
        json!({"type": "report", "title": "Only CSL", "DOI": "10.5555/csl-only"}),
    );
    for (i, doi) in dois.iter().enumerate() {
        let (r, _) = follow(
            &emu,
            &format!("{}/{doi}", emu.doi_base()),
            &[("Accept", CSL)],
        )
        .await;
        assert_eq!(r.status, 200, "{doi}");
        let c = r.json();
        assert_eq!(c["title"], format!("Result {i}"));
        assert_eq!(c["DOI"], doi.to_lowercase());
        assert_eq!(
            c["type"],
            if i % 5 == 0 {
                "chapter"
            } else {
                "article-journal"
            }
        );
        if i % 5 == 0 {
            assert_eq!(
                (
                    c["container-title"].as_str(),
                    c["collection-title"].as_str()
                ),
                (Some("A Book"), Some("Series"))
            );
        }
        assert_eq!(c["issued"]["date-parts"][0][0], 2000 + i as i64);
    }
    let (r, _) = follow(
        &emu,
        &format!("{}/10.5555/CSL-ONLY", emu.doi_base()),
        &[("Accept", CSL)],
    )
    .await;
    assert_eq!(r.json()["title"], "Only CSL");
    let (r, _) = follow(
        &emu,
        &format!("{}/10.5072/zenodo.8142113", emu.doi_base()),
        &[("Accept", CSL)],
    )
    .await;
    assert_eq!(r.json()["type"], "dataset");
    // A closed Unpaywall record for each Crossref work.
    let v = get(
        &emu,
        &format!(
            "{}/v2/10.5555/emu.007?email=me@uni.edu",
            emu.unpaywall_base()
        ),
        &[],
    )
    .await
    .json();
    assert_eq!(
        (v["is_oa"].as_bool(), v["journal_name"].as_str()),
        (Some(false), Some("Journal of Emulated Results"))
    );

    emu.add_openlibrary_book(json!({"title": "A Book", "authors": [{"name": "Ada Lovelace", "url": "https://openlibrary.org/authors/OL1A"}],
        "identifiers": {"isbn_13": ["9781234567897"]}, "publishers": [{"name": "P"}], "publish_date": "2001", "key": "/books/OL1M", "url": "https://openlibrary.org/books/OL1M"}));
    let v = get(
        &emu,
        &format!(
            "{}/api/books?bibkeys=ISBN:978-1-234-56789-7&format=json&jscmd=data",
            emu.openlibrary_base()
        ),
        &[],
    )
    .await
    .json();
    assert_eq!(v["ISBN:978-1-234-56789-7"]["title"], "A Book");
    emu.add_pubmed_summary(json!({"uid": "11111111", "title": "T.", "authors": [{"name": "Lovelace A", "authtype": "Author", "clusterid": ""}],
        "articleids": [{"idtype": "pubmed", "idtypen": 1, "value": "11111111"}]}));
    emu.add_pmc_record(json!({"pmcid": "PMC1111111", "pmid": 11111111, "doi": "10.5555/emu.001"}));
    let v = get(
        &emu,
        &format!(
            "{}/entrez/eutils/esummary.fcgi?db=pubmed&id=11111111&retmode=json",
            emu.ncbi_base()
        ),
        &[],
    )
    .await
    .json();
    assert_eq!(v["result"]["11111111"]["title"], "T.");
    let v = get(
        &emu,
        &format!(
            "{}/pmc/utils/idconv/v1.0/?ids=PMC1111111&format=json",
            emu.ncbi_base()
        ),
        &[],
    )
    .await
    .json();
    assert_eq!(v["records"][0]["doi"], "10.5555/emu.001");
}
