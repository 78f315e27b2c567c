//! The emulator's self-tests: ONE test binary that drives the emulator over HTTP with the
//! plain client of `zotero_emulator::testing` and checks it behaves like Zotero's servers and
//! the outside hosts it stands in for (`cargo test -p zotero-emulator`).
// Test support: failing loudly is the right thing here.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod annotations;
mod changes;
mod faults;
mod files;
mod fulltext;
mod hosts;
mod libraries;
mod metadata;
mod oauth;
mod schema;
mod selftest;
mod writes;
