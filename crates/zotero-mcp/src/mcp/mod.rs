//! The MCP protocol face: the request loop, resources, prompts, subscriptions, and the answer envelope.

pub mod envelope;
pub mod errors;
pub mod prompts;
pub mod resources;
pub mod server;
pub mod subscriptions;
pub mod surface;
