//! What the tools share: write reports, confirmation, output caps, argument parsing and schema publishing.

pub mod changes;
pub mod confirm;
pub mod output;
pub mod parse;
pub mod publish;
