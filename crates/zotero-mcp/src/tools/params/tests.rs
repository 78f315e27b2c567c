//! The checked parameter types: what each accepts, refuses, and the schema it publishes.
use super::keys::*;
use super::paging::*;
use super::tags::*;
use super::*;
use serde::Deserialize;
use serde_json::json;

fn de<T: for<'de> Deserialize<'de>>(v: serde_json::Value) -> Result<T, String> {
    serde_json::from_value(v).map_err(|e| e.to_string())
}

#[test]
fn keys_are_checked() {
    assert!(de::<ObjectKey>(json!("X42A7DEE")).is_ok());
    for bad in [
        "x42a7dee", "ABC/../x", "ABCDEFG0", "ABCDEFGO", "X42A7DE", "",
    ] {
        let e = de::<ObjectKey>(json!(bad)).unwrap_err();
        assert!(e.contains("Zotero key"), "{bad}: {e}");
    }
    assert!(de::<ObjectKey>(json!(12345678)).is_err());
}

#[test]
fn whole_numbers_are_bounded_never_clamped() {
    assert_eq!(de::<Limit>(json!(5.0)).unwrap().get(), 5);
    assert_eq!(de::<Limit>(json!(100)).unwrap().get(), 100);
    for bad in [
        json!(0),
        json!(101),
        json!(2.5),
        json!(-1),
        json!("5"),
        json!(1e300),
    ] {
        assert!(de::<Limit>(bad.clone()).is_err(), "{bad}");
    }
    assert_eq!(de::<Start>(json!(u64::MAX)).unwrap().get(), u64::MAX);
    // 2^64 arrives as a float: refused, not saturated to u64::MAX.
    let e = de::<Start>(json!(18_446_744_073_709_551_616.0_f64)).unwrap_err();
    assert!(e.contains("an integer of at least 0"), "{e}");
    assert!(de::<Start>(json!(-0.0)).is_ok());
    assert!(de::<Start>(json!(-1)).is_err());
}

#[test]
fn tags_repeat_or_not() {
    let e = de::<FilterTags>(json!(["a", "b", "a"])).unwrap_err();
    assert!(e.contains("repeats the tag 'a'"), "{e}");
    let t = de::<Tags>(json!(["a", "b", "a"])).unwrap();
    assert_eq!(t.into_strings(), vec!["a", "b"]);
    assert!(de::<Tags>(json!(["a", ""])).is_err());
    assert!(de::<Tags>(json!("a")).is_err());
}

#[test]
fn sort_keys_are_the_documented_ones() {
    assert!(de::<SortKey>(json!("relevance")).is_ok());
    assert!(de::<SortKey>(json!("dateAdded")).is_ok());
    let e = de::<SortKey>(json!("relevancy")).unwrap_err();
    assert!(e.contains("dateAdded"), "{e}");
}

#[test]
fn creators_follow_the_seed_shape() {
    let c = |v| de::<Creator>(v).unwrap().check();
    let ok = c(json!({"creator_type": "author", "first_name": " Ada ", "last_name": "Lovelace"}));
    assert_eq!(ok.unwrap().first_name.as_deref(), Some("Ada"));
    let org = c(json!({"creator_type": "author", "name": "CERN"})).unwrap();
    assert_eq!(org.name.as_deref(), Some("CERN"));
    for (bad, field) in [
        (json!({"creator_type": " ", "name": "X"}), "creator_type"),
        (
            json!({"creator_type": "author", "first_name": "Ada"}),
            "last_name",
        ),
        (
            json!({"creator_type": "author", "first_name": "Ada", "last_name": ""}),
            "last_name",
        ),
        (
            json!({"creator_type": "author", "last_name": "Lovelace"}),
            "first_name",
        ),
        (
            json!({"creator_type": "author", "name": "X", "last_name": "Y"}),
            "last_name",
        ),
        (
            json!({"creator_type": "author", "name": "X", "first_name": "Y"}),
            "first_name",
        ),
        (json!({"creator_type": "author", "name": " "}), "name"),
        (json!({"creator_type": "author"}), "last_name"),
    ] {
        assert_eq!(c(bad.clone()).unwrap_err().0, field, "{bad}");
    }
    assert!(de::<Creator>(json!({"creator_type": "author", "nmae": "X"})).is_err());
    assert!(de::<Creator>(json!({"first_name": "A", "last_name": "B"})).is_err());
}
