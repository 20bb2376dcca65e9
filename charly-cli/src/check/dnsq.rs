//! `dns:` with `server:`: the name asked of one DNS server directly (RFC 1035 §4 messages over
//! UDP), not of the host's resolver: an `A` and an `AAAA` question, the answers' addresses.
//!
//! Hand-written rather than a resolver crate: two fixed questions and the address records of
//! the answer are all a check needs (about a hundred lines), while hickory's resolver would add
//! a DNS stack to a binary kept under its size budget.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::Duration;

/// How long one question may wait for its answer.
pub(super) const DNS_TIMEOUT: Duration = Duration::from_secs(3);

const TYPE_A: u16 = 1;
const TYPE_AAAA: u16 = 28;

/// `server` as a socket address: `IP`, `IP:PORT` or `[IPv6]:PORT` (port 53 by default).
///
/// # Errors
///
/// What is wrong with it, and what is allowed.
pub(super) fn server_addr(server: &str) -> Result<SocketAddr, String> {
    if let Ok(addr) = server.parse::<SocketAddr>() {
        return Ok(addr);
    }
    if let Ok(ip) = server.trim_matches(['[', ']']).parse::<IpAddr>() {
        return Ok(SocketAddr::new(ip, 53));
    }
    Err(format!("server {server:?} is not an IP address or IP:PORT (e.g. 127.0.0.1:53, [::1]:5353)"))
}

/// The addresses `server` gives for `name` (A, then AAAA records); `Ok(empty)` when it knows
/// the name without addresses.
///
/// # Errors
///
/// No answer in time, a refusal or `NXDOMAIN` (said so), a reply that is not DNS.
pub(super) async fn lookup(server: SocketAddr, name: &str) -> Result<Vec<String>, String> {
    let bind: SocketAddr =
        if server.is_ipv4() { (Ipv4Addr::UNSPECIFIED, 0).into() } else { (Ipv6Addr::UNSPECIFIED, 0).into() };
    let socket = tokio::net::UdpSocket::bind(bind).await.map_err(|e| e.to_string())?;
    socket.connect(server).await.map_err(|e| format!("server {server}: {e}"))?;
    let mut out = Vec::new();
    let mut failure = None;
    for (n, qtype) in [TYPE_A, TYPE_AAAA].into_iter().enumerate() {
        let id = 0x6368 + n as u16;
        socket.send(&query(id, name, qtype)?).await.map_err(|e| format!("server {server}: {e}"))?;
        let mut buf = vec![0u8; 4096];
        let len = loop {
            let len = tokio::time::timeout(DNS_TIMEOUT, socket.recv(&mut buf))
                .await
                .map_err(|_| format!("server {server} did not answer within {}s", DNS_TIMEOUT.as_secs()))?
                .map_err(|e| format!("server {server}: {e}"))?;
            // A late answer to an earlier question is not this one's.
            if len >= 2 && u16::from_be_bytes([buf[0], buf[1]]) == id {
                break len;
            }
        };
        match answers(&buf[..len], qtype) {
            Ok(ips) => out.extend(ips),
            Err(e) => failure = failure.or(Some(format!("server {server}: {e}"))),
        }
    }
    // One question answered with addresses is enough (a server with only an IPv4 address for
    // a name may answer NXDOMAIN to its AAAA question, as dnsmasq's --local does).
    match failure {
        Some(why) if out.is_empty() => Err(why),
        _ => Ok(out),
    }
}

/// A standard query for `name` of `qtype`, recursion desired.
fn query(id: u16, name: &str, qtype: u16) -> Result<Vec<u8>, String> {
    let mut msg = Vec::with_capacity(18 + name.len());
    msg.extend(id.to_be_bytes());
    msg.extend([0x01, 0x00]); // RD
    msg.extend([0, 1, 0, 0, 0, 0, 0, 0]); // one question
    for label in name.trim_end_matches('.').split('.') {
        if label.is_empty() || label.len() > 63 {
            return Err(format!("{name:?} is not a host name (empty or over-long label)"));
        }
        msg.push(label.len() as u8);
        msg.extend(label.as_bytes());
    }
    msg.push(0);
    msg.extend(qtype.to_be_bytes());
    msg.extend(1u16.to_be_bytes()); // IN
    Ok(msg)
}

/// The addresses of `qtype` records in reply `msg`.
fn answers(msg: &[u8], qtype: u16) -> Result<Vec<String>, String> {
    let short = || "a truncated or malformed reply".to_owned();
    let u16_at = |i: usize| msg.get(i..i + 2).map(|b| u16::from_be_bytes([b[0], b[1]])).ok_or_else(short);
    let flags = u16_at(2)?;
    if flags & 0x8000 == 0 {
        return Err("the reply is not a DNS response".into());
    }
    match flags & 0x000f {
        0 => {}
        3 => return Err("no such name (NXDOMAIN)".into()),
        5 => return Err("the query was refused (REFUSED)".into()),
        code => return Err(format!("the server failed the query (rcode {code})")),
    }
    let (questions, records) = (u16_at(4)?, u16_at(6)?);
    let mut at = 12;
    for _ in 0..questions {
        at = skip_name(msg, at).ok_or_else(short)? + 4;
    }
    let mut out = Vec::new();
    for _ in 0..records {
        at = skip_name(msg, at).ok_or_else(short)?;
        let (rtype, len) = (u16_at(at)?, usize::from(u16_at(at + 8)?));
        let data = msg.get(at + 10..at + 10 + len).ok_or_else(short)?;
        match (rtype, data.len()) {
            (TYPE_A, 4) if rtype == qtype => {
                out.push(Ipv4Addr::new(data[0], data[1], data[2], data[3]).to_string());
            }
            (TYPE_AAAA, 16) if rtype == qtype => {
                let bytes: [u8; 16] = data.try_into().expect("16 bytes");
                out.push(Ipv6Addr::from(bytes).to_string());
            }
            _ => {}
        }
        at += 10 + len;
    }
    Ok(out)
}

/// The offset after the (possibly compressed) name at `at`.
fn skip_name(msg: &[u8], mut at: usize) -> Option<usize> {
    loop {
        let len = *msg.get(at)?;
        match len {
            0 => return Some(at + 1),
            l if l & 0xc0 == 0xc0 => return Some(at + 2),
            l => at += 1 + usize::from(l),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_addresses() {
        assert_eq!(server_addr("127.0.0.1").unwrap().to_string(), "127.0.0.1:53");
        assert_eq!(server_addr("127.0.0.1:5353").unwrap().to_string(), "127.0.0.1:5353");
        assert_eq!(server_addr("[::1]:5353").unwrap().to_string(), "[::1]:5353");
        assert_eq!(server_addr("::1").unwrap().to_string(), "[::1]:53");
        assert!(server_addr("dns.example").unwrap_err().contains("not an IP address"));
    }

    #[test]
    fn a_reply_with_a_compressed_name_and_a_cname() {
        let mut reply = query(7, "www.example", TYPE_A).unwrap();
        reply[2] = 0x81;
        reply[3] = 0x80;
        reply[7] = 2; // two answers
        // www.example CNAME (pointer to the question name), then A 10.1.2.3.
        reply.extend([0xc0, 12, 0, 5, 0, 1, 0, 0, 0, 60, 0, 2, 0xc0, 16]);
        reply.extend([0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 10, 1, 2, 3]);
        assert_eq!(answers(&reply, TYPE_A).unwrap(), ["10.1.2.3"]);
        reply[3] = 0x83;
        assert_eq!(answers(&reply, TYPE_A).unwrap_err(), "no such name (NXDOMAIN)");
        assert!(answers(&reply[..20], TYPE_A).is_err());
    }
}
