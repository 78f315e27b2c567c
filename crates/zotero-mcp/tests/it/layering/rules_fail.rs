//! Each rule of the layering test on small in-memory sources: what it must report, it
//! reports (a rule that cannot fail guards nothing).

use super::source::{blank, functions, tokens};
use super::*;

fn demo(name: &str, files: &[(&str, &str)]) -> Crate {
    let files = files
        .iter()
        .map(|(p, t)| (p.to_string(), t.to_string()))
        .collect();
    Crate::new(name, files)
}

fn edges(krate: &Crate) -> Vec<String> {
    let mut out: Vec<String> = krate
        .arrows()
        .iter()
        .map(|a| {
            format!(
                "{} -> {}: {}",
                krate.files[a.from].rel, krate.files[a.to].rel, a.name
            )
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Lines `fn` to `}` of the one function in `body`.
fn fn_lines(code: &str) -> Vec<(String, usize)> {
    functions(&tokens(&blank(code)))
        .into_iter()
        .map(|f| (f.name, f.lines))
        .collect()
}

#[test]
fn literals_and_comments_hide_their_braces_and_paths() {
    let code = r##"fn a() {
let s = "}\" crate::x::Y {";
let r = r#"}" } "#;
let c = ('}', '\'', b'{', '\u{7d}');
/* } /* nested } */ crate::x::Z */
// }
let l: &'static str = ""; loop {}
}
fn b<'a>(x: &'a str) {}
"##;
    assert_eq!(fn_lines(code), [("a".to_string(), 8), ("b".to_string(), 1)]);
    let blanked = blank(code);
    assert!(!blanked.contains("crate::x"), "{blanked}");
    assert_eq!(blanked.lines().count(), code.lines().count());
    // A multi-byte char literal, and one in an identifier.
    assert_eq!(
        fn_lines("fn é() {\n let c = 'é';\n}\n"),
        [("é".to_string(), 3)]
    );
}

#[test]
fn a_long_function_fails_and_a_listed_one_that_shrank_too() {
    let long = format!(
        "//! Demo.\nfn long() {{\n{}}}\nfn short() {{}}\n",
        "    x();\n".repeat(100)
    );
    let krate = demo("demo", &[("lib.rs", &long)]);
    let found = long_fns(std::slice::from_ref(&krate), 100, &[]);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].starts_with("demo/src/lib.rs::long: 102 lines"),
        "{found:?}"
    );
    assert!(long_fns(
        std::slice::from_ref(&krate),
        100,
        &["demo/src/lib.rs::long"]
    )
    .is_empty());
    let stale = long_fns(
        std::slice::from_ref(&krate),
        102,
        &["demo/src/lib.rs::long"],
    );
    assert!(stale[0].contains("delete it from LONG_FNS"), "{stale:?}");
    // Test code is not counted.
    let tests = format!("//! Demo.\n#[cfg(test)]\nmod tests {{\n{long}}}\n");
    assert!(long_fns(&[demo("demo", &[("lib.rs", &tests)])], 100, &[]).is_empty());
}

#[test]
fn a_long_file_fails_but_not_for_its_tests_nor_in_the_emulator() {
    let long = format!("//! Demo.\n{}", "const A: u8 = 0;\n".repeat(500));
    let found = long_files(&[demo("demo", &[("lib.rs", &long)])], 500, &[]);
    assert_eq!(found.len(), 1);
    assert!(
        found[0].starts_with("demo/src/lib.rs: 501 lines"),
        "{found:?}"
    );
    let listed = long_files(
        &[demo("demo", &[("lib.rs", &long)])],
        500,
        &["demo/src/lib.rs"],
    );
    assert!(listed.is_empty());
    let short = [demo("demo", &[("lib.rs", "//! Short.\n")])];
    let stale = long_files(&short, 500, &["demo/src/lib.rs"]);
    assert!(stale[0].contains("LONG_FILES"), "{stale:?}");
    assert!(long_files(&[demo(EMULATOR, &[("lib.rs", &long)])], 500, &[]).is_empty());
    let tested = format!("//! Demo.\nfn a() {{}}\n#[cfg(test)]\nmod tests {{\n{long}}}\n");
    assert!(long_files(&[demo("demo", &[("lib.rs", &tested)])], 500, &[]).is_empty());
    // A `#[cfg(test)] mod name;` file is all test.
    let split = [
        ("lib.rs", "//! Demo.\n#[cfg(test)]\nmod tests;\n"),
        ("tests.rs", long.as_str()),
    ];
    assert!(long_files(&[demo("demo", &split)], 500, &[]).is_empty());
}

#[test]
fn a_file_without_a_doc_comment_fails() {
    let krate = demo(
        "demo",
        &[
            ("lib.rs", "//! Demo.\nmod a;\n"),
            ("a.rs", "// Not a doc.\n"),
        ],
    );
    assert_eq!(
        files_without_doc(&[krate]),
        ["demo/src/a.rs: does not open with `//!` (say what the file is for)"]
    );
}

#[test]
fn use_trees_are_read_whole() {
    let code = blank("pub use crate::a::{b, c::{self, d as e}, f::*};\nuse ::g::h;\n");
    let toks = tokens(&code);
    let (leaves, _) = source::uses(&toks);
    let read: Vec<_> = leaves
        .iter()
        .map(|l| (l.path.join("::"), l.binds.clone(), l.glob))
        .collect();
    let s = |x: &str| Some(x.to_string());
    assert_eq!(
        read,
        [
            ("crate::a::b".to_string(), s("b"), false),
            ("crate::a::c".to_string(), s("c"), false),
            ("crate::a::c::d".to_string(), s("e"), false),
            ("crate::a::f".to_string(), None, true),
            ("g::h".to_string(), s("h"), false),
        ]
    );
}

/// A crate whose `tools` hands on `json_chars` from `tools/budget.rs` and calls its
/// children by `child::Name`, and whose `service` takes `json_chars` from `tools`.
fn handed_on() -> Crate {
    demo(
        "demo",
        &[
            ("lib.rs", "//! Demo.\npub mod service;\npub mod tools;\n"),
            (
                "tools/mod.rs",
                "//! Tools.\nmod budget;\nmod list;\nmod support;\n\
                 pub use budget::json_chars;\npub use support::*;\n\
                 pub fn run() { list::List::run(); }\n",
            ),
            (
                "tools/budget.rs",
                "//! Budget.\npub fn json_chars() -> usize { 0 }\n",
            ),
            ("tools/list.rs", "//! List.\npub struct List;\n"),
            ("tools/support.rs", "//! Support.\npub struct Output;\n"),
            (
                "service/mod.rs",
                "//! Service.\nmod graph;\nuse crate::tools::{self, Output};\n\
                 pub fn f() { tools::run(); }\n",
            ),
            (
                "service/graph.rs",
                "//! Graph.\nuse crate::tools::json_chars;\n\
                 #[cfg(test)]\nmod tests { use crate::tools::run; }\n",
            ),
        ],
    )
}

#[test]
fn imports_are_followed_through_re_exports_and_child_paths() {
    assert_eq!(
        edges(&handed_on()),
        [
            "service/graph.rs -> tools/budget.rs: json_chars",
            "service/mod.rs -> tools/mod.rs: run",
            "service/mod.rs -> tools/support.rs: Output",
            "tools/mod.rs -> tools/budget.rs: json_chars",
            "tools/mod.rs -> tools/list.rs: List",
            "tools/mod.rs -> tools/support.rs: *",
        ]
    );
}

const TWO_FLOORS: FloorPlan = FloorPlan {
    order: &[&["tools"], &["service"]],
    apart: &[],
    not_yet: &[],
};

#[test]
fn a_climbing_import_fails_with_its_file_module_and_names() {
    let krate = handed_on();
    assert_eq!(
        folder_order(&krate, &TWO_FLOORS, &[]),
        [
            "service/graph.rs imports tools::budget: json_chars",
            "service/mod.rs imports tools: run",
            "service/mod.rs imports tools::support: Output",
        ]
    );
    // Listed exactly, it passes; listed with other names or no longer true, it fails.
    let known: Names = &[
        "service/graph.rs imports tools::budget: json_chars",
        "service/mod.rs imports tools: run",
        "service/mod.rs imports tools::support: Output",
    ];
    assert!(folder_order(&krate, &TWO_FLOORS, known).is_empty());
    let wider: Names = &[
        "service/graph.rs imports tools::budget: json_chars, more",
        "service/mod.rs imports tools: run",
        "service/mod.rs imports tools::support: Output",
        "service/gone.rs imports tools: run",
    ];
    assert_eq!(
        folder_order(&krate, &TWO_FLOORS, wider),
        [
            "service/graph.rs imports tools::budget: json_chars (KNOWN_CLIMBS has \
             \"service/graph.rs imports tools::budget: json_chars, more\")",
            "\"service/gone.rs imports tools: run\" is no longer true: mend or delete it in \
             KNOWN_CLIMBS",
        ]
    );
    // Downward, it passes; between two modules kept apart, or on one floor, it fails.
    let down = FloorPlan {
        order: &[&["service"], &["tools"]],
        ..TWO_FLOORS
    };
    assert!(folder_order(&krate, &down, &[]).is_empty());
    let apart = FloorPlan {
        apart: &[("service", "tools")],
        ..down
    };
    let one = FloorPlan {
        order: &[&["tools", "service"]],
        ..TWO_FLOORS
    };
    for plan in [apart, one] {
        assert_eq!(folder_order(&krate, &plan, known), [""; 0]);
        assert_eq!(folder_order(&krate, &plan, &[]).len(), 3);
    }
}

#[test]
fn every_module_has_a_floor_and_the_order_names_only_modules() {
    let krate = handed_on();
    let missing = FloorPlan {
        order: &[&["tools"]],
        ..TWO_FLOORS
    };
    assert_eq!(
        folder_order(&krate, &missing, &[]),
        ["top-level module `service` has no floor in ORDER: place it"]
    );
    let extra = FloorPlan {
        order: &[&["service"], &["tools"], &["error", "time"]],
        not_yet: &["time", "service"],
        ..TWO_FLOORS
    };
    assert_eq!(
        folder_order(&krate, &extra, &[]),
        [
            "`service` exists now: take it out of NOT_YET",
            "ORDER names `error`, which is no module",
        ]
    );
}

#[test]
fn a_circle_among_the_modules_of_a_folder_fails_with_its_ties() {
    let looped = |deep: &str| {
        demo(
            "demo",
            &[
                ("lib.rs", "//! D.\nmod a;\nmod b;\npub struct Root;\n"),
                (
                    "a/mod.rs",
                    "//! A.\nmod x;\nmod y;\npub struct A;\npub fn f() { x::g(); }\n",
                ),
                (
                    "a/x.rs",
                    &format!("//! X.\nuse super::A;\nuse crate::Root;\npub fn g() {{}}\n{deep}"),
                ),
                ("a/y.rs", "//! Y.\nuse super::x::g;\n"),
                ("b.rs", "//! B.\npub fn h() { crate::a::f(); }\n"),
            ],
        )
    };
    // A parent and its children, and a module and the crate root: no circle.
    let calm = [looped("")];
    assert!(
        folder_circles(&calm, &[], &[]).is_empty(),
        "{:?}",
        folder_circles(&calm, &[], &[])
    );
    let top = [looped("fn up() { crate::b::h(); }\n")];
    assert_eq!(
        folder_circles(&top, &[], &[]),
        [
            "demo: circle among [\"a\", \"b\"], tied by\n  a/x.rs imports b: h\n  \
          b.rs imports a: f"
        ]
    );
    assert!(folder_circles(&top, &[("demo", &["a", "b"])], &[]).is_empty());
    assert!(folder_circles(&top, &[], &[("demo", &["b", "a"])]).is_empty());
    let inner = [looped("fn side() { super::y::k(); }\n")];
    let found = folder_circles(&inner, &[], &[]);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].starts_with("demo: circle among [\"a::x\", \"a::y\"]"),
        "{found:?}"
    );
    let stale = folder_circles(&calm, &[], &[("demo", &["a", "b"])]);
    assert_eq!(
        stale,
        ["the known circle (\"demo\", [\"a\", \"b\"]) is no more: delete it"]
    );
}
