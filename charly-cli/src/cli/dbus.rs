//! `charly check dbus ...`: the session bus ([`crate::dbus`]).

use charly::McpTool;
use clap::{Args, Subcommand};

use super::Timeout;
use crate::dbus::{BusNames, BusReply, BusXml, Notified};

/// Which bus.
#[derive(Args, McpTool, Debug, Clone)]
pub struct BusTarget {
    /// `.` for this machine's session bus (DBUS_SESSION_BUS_ADDRESS), or a box: its running
    /// container's bus, at the unix:path= socket of the container's DBUS_SESSION_BUS_ADDRESS
    pub target: String,
    /// Box instance: the container is charly-<box>-<instance>
    #[arg(short, long)]
    pub instance: Option<String>,
    /// Timeout of the call, e.g. 30s, 500ms
    #[arg(long, default_value = "30s")]
    pub timeout: Timeout,
}

/// `charly check dbus ...`
#[derive(Subcommand, McpTool, Debug)]
pub enum DbusCmd {
    /// List the names on the bus (org.freedesktop.DBus.ListNames), one per line
    #[mcp_tool(output = BusNames, open_world)]
    List(BusTarget),
    /// Call a method with typed arguments (string:, uint32:, int32:, int64:, uint64:,
    /// boolean:, double:, byte:, objpath:, and as dbus-send spells them array:TYPE:a,b and
    /// dict:KEYTYPE:VALUETYPE:k1,v1,k2,v2) and print each returned value
    #[mcp_tool(output = BusReply, destructive = "calls any method on the bus, which can do anything the service does", open_world)]
    Call {
        /// The bus.
        #[command(flatten)]
        on: BusTarget,
        /// Destination, e.g. org.freedesktop.DBus
        dest: String,
        /// Object path, e.g. /org/freedesktop/DBus
        path: String,
        /// Interface.Method, e.g. org.freedesktop.DBus.GetNameOwner
        method: String,
        /// Arguments, each type:value (array:string:a,b; dict:string:uint32:k1,1,k2,2)
        args: Vec<String>,
    },
    /// Print an object's introspection XML
    #[mcp_tool(output = BusXml, open_world)]
    Introspect {
        /// The bus.
        #[command(flatten)]
        on: BusTarget,
        /// Destination
        dest: String,
        /// Object path
        path: String,
    },
    /// Send a desktop notification (org.freedesktop.Notifications.Notify)
    #[mcp_tool(output = Notified, destructive = "shows a notification on the desktop", open_world)]
    Notify {
        /// The bus.
        #[command(flatten)]
        on: BusTarget,
        /// The title
        title: String,
        /// The body
        body: Option<String>,
    },
}
