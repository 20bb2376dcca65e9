//! `charly check mcp <method>`: one client method against one server, as a report.

mod methods;
mod print;
mod progress;

pub use methods::{
    Method, MethodOptions, ProgressMode, Request, Status, UnknownMethod, block_on, call, list_prompts,
    list_resources, list_tools, parse_input, ping, read, run, run_on, servers,
};
pub use print::{
    write_call_result, write_prompts, write_read_result, write_resources, write_servers, write_tools,
};
pub use progress::ProgressBar;
