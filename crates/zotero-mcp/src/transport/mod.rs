//! The transports the one server handler runs on.

pub mod stdio;
