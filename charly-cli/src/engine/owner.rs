//! Who holds a host port: the process whose socket listens on it, read from
//! `/proc/net/{tcp,tcp6,udp,udp6}` (the socket's inode) and `/proc/<pid>/fd` (which process
//! has that inode open). Linux only; processes of other users may be unreadable when charly
//! is not root, and are then not named.

use std::collections::BTreeSet;

/// A process that holds a port.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Holder {
    /// Its pid.
    pub pid: u32,
    /// Its command name (`/proc/<pid>/comm`).
    pub name: String,
}

impl std::fmt::Display for Holder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "process {} (pid {})", self.name, self.pid)
    }
}

/// The processes listening on (tcp) or bound to (udp) `port`, any address.
pub fn holders(port: u16, protocol: &str) -> Vec<Holder> {
    let (tables, state) = match protocol {
        "udp" => (["/proc/net/udp", "/proc/net/udp6"], "07"),
        _ => (["/proc/net/tcp", "/proc/net/tcp6"], "0A"),
    };
    let mut inodes = BTreeSet::new();
    for table in tables {
        let Ok(text) = std::fs::read_to_string(table) else { continue };
        inodes.extend(socket_inodes(&text, port, state));
    }
    if inodes.is_empty() {
        return Vec::new();
    }
    let mut found = Vec::new();
    let Ok(procs) = std::fs::read_dir("/proc") else { return found };
    for entry in procs.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|p| p.parse::<u32>().ok()) else { continue };
        let Ok(fds) = std::fs::read_dir(entry.path().join("fd")) else { continue };
        let holds = fds.flatten().any(|fd| {
            std::fs::read_link(fd.path())
                .ok()
                .and_then(|l| {
                    let l = l.to_string_lossy().into_owned();
                    l.strip_prefix("socket:[")?.strip_suffix(']')?.parse::<u64>().ok()
                })
                .is_some_and(|inode| inodes.contains(&inode))
        });
        if holds {
            let name =
                std::fs::read_to_string(entry.path().join("comm")).unwrap_or_default().trim().to_owned();
            found.push(Holder { pid, name });
        }
    }
    found
}

/// The inodes of the sockets in a `/proc/net/*` table on local port `port` in `state`.
fn socket_inodes(text: &str, port: u16, state: &str) -> Vec<u64> {
    text.lines()
        .skip(1)
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let local = fields.get(1)?;
            let (_, hex) = local.rsplit_once(':')?;
            let p = u16::from_str_radix(hex, 16).ok()?;
            (p == port && *fields.get(3)? == state).then(|| fields.get(9)?.parse().ok())?
        })
        .filter(|inode| *inode != 0)
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_listening_socket_is_found_with_its_process() {
        let table = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4242 1 0\n   1: 0100007F:1F90 0100007F:9C40 01 00000000:00000000 00:00000000 00000000     0        0 4343 1 0\n";
        assert_eq!(super::socket_inodes(table, 8080, "0A"), [4242]);
        assert!(super::socket_inodes(table, 8081, "0A").is_empty());
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let holders = super::holders(port, "tcp");
        assert!(holders.iter().any(|h| h.pid == std::process::id()), "{holders:?}");
    }
}
