//! The client half: `charly check mcp <method>`, check plans and endpoint resolution.
//!
//! One test binary, a module per area. The peers (server-everything) come from
//! `scripts/peers.sh`; see `support`.

mod charly_server;
mod inmemory;
mod methods;
mod plans;
mod resolve;
mod revisions;
mod rmcp_http;
mod support;
mod trial;
