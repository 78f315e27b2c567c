//! The transports the one server handler runs on.

mod framed;
pub mod http;
mod id_scan;
mod jsonrpc;
mod lines;
mod shape;
pub mod stdio;
