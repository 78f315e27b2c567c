//! Shared by the property tests: proptest settings, a runtime per case, and an emulator with
//! the built server pointed at it.
use proptest::test_runner::Config as ProptestConfig;

use crate::common::{env_for, in_process, Server};
use zotero_emulator::{Emulator, Library, API_KEY, USER_ID};

pub const WORDS: [&str; 20] = zotero_emulator::TITLE_WORDS;
pub const TAGS: [&str; 6] = ["tag-a", "tag-b", "tag-c", "tag-d", "tag-e", "tag-f"];
pub const KEY_ALPHABET: &str = "23456789ABCDEFGHIJKLMNPQRSTUVWXYZ";

pub fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        max_shrink_iters: 64,
        // Regression files would land in the shared checkout; failures print their input.
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Runtime::new().expect("tokio runtime")
}

pub async fn start(lib: Library, extra_env: &[(&str, &str)]) -> (Emulator, Server) {
    let emu = Emulator::with_library(lib).await;
    let mut env = env_for(&emu.uri(), USER_ID, API_KEY);
    env.extend(
        extra_env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string())),
    );
    let server = in_process(&env).await;
    (emu, server)
}
