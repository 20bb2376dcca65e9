//! In-container probes: one POSIX `sh` script per check (so a disposable venue needs one
//! container per check), and the judgement of what it printed.
//!
//! Each script prints tagged lines (`stat:...`, `installed:...`, `absent`) that [`judge`]
//! reads. A script whose tool is missing (no `ss` and no `netstat`, no `supervisorctl` and no
//! `systemctl`) prints `charly-missing: <tools>` on stderr and exits 127: the check fails
//! naming them, never passes. Where a file the kernel or libc keeps is as good as a tool
//! (`/proc/mounts`, `/sys/class/net`, `/etc/passwd` without `getent`, `/proc/sys` without
//! `sysctl`, `/var/lib/dpkg/status` without `dpkg-query`), the script reads the file.

use super::matcher::Matcher;
use super::verbs::{FILETYPES, SystemStep, Verb};

/// The marker a script prints on stderr when its tool is missing.
pub const MISSING: &str = "charly-missing: ";

/// What a probe printed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProbeOutput {
    /// Its exit status.
    pub status: i32,
    /// Its stdout.
    pub stdout: String,
    /// Its stderr.
    pub stderr: String,
}

/// `s` quoted for `sh` (single quotes; a `'` becomes `'\''`).
pub(super) fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

fn need(tools: &[&str], what: &str) -> String {
    let test =
        tools.iter().map(|t| format!("command -v {t} >/dev/null 2>&1")).collect::<Vec<_>>().join(" || ");
    format!("{{ {test}; }} || {{ echo '{MISSING}{what}' >&2; exit 127; }}\n")
}

/// The script for `step` (an in-container verb), or `None` for a host verb.
pub(super) fn script(step: &SystemStep) -> Option<String> {
    let s = quote(&step.subject);
    let mut out = String::new();
    match step.verb() {
        Verb::File => {
            out.push_str(&format!(
                "p={s}\nif [ ! -e \"$p\" ] && [ ! -L \"$p\" ]; then echo absent; exit 0; fi\n"
            ));
            out.push_str(&need(&["stat"], "stat"));
            out.push_str("echo \"stat:$(stat -c '%F|%a|%U|%G' \"$p\")\"\n");
            if step.matchers.contains_key("sha256") {
                out.push_str(&need(&["sha256sum"], "sha256sum"));
                out.push_str("set -- $(sha256sum \"$p\"); echo \"sha256:$1\"\n");
            }
            if step.matchers.contains_key("contains") {
                out.push_str("echo content:; cat \"$p\"\n");
            }
        }
        Verb::Package => {
            out.push_str(&format!("n={s}\n"));
            out.push_str(
                "if command -v rpm >/dev/null 2>&1 && { [ -d /var/lib/rpm ] || [ -d /usr/lib/sysimage/rpm ]; }; then\n\
                 \x20 if v=$(rpm -q --qf '%{VERSION}-%{RELEASE}' \"$n\" 2>/dev/null); then echo \"installed:$v\"; else echo absent; fi; exit 0\n\
                 fi\n\
                 if [ -f /var/lib/dpkg/status ]; then\n\
                 \x20 awk -v p=\"$n\" '/^Package: /{pk=$2; st=\"\"; ver=\"\"} /^Status: /{st=$0} /^Version: /{ver=$2}\n\
                 \x20   /^$/{ if (pk==p && st ~ / installed$/ && !f) {print \"installed:\" ver; f=1}; pk=\"\" }\n\
                 \x20   END{ if (pk==p && st ~ / installed$/ && !f) {print \"installed:\" ver; f=1}; if (!f) print \"absent\" }' /var/lib/dpkg/status\n\
                 \x20 exit 0\n\
                 fi\n\
                 if command -v pacman >/dev/null 2>&1; then\n\
                 \x20 if v=$(pacman -Q \"$n\" 2>/dev/null); then echo \"installed:${v#* }\"; else echo absent; fi; exit 0\n\
                 fi\n",
            );
            out.push_str(&format!(
                "echo '{MISSING}rpm, dpkg or pacman (the container has no package database)' >&2; exit 127\n"
            ));
        }
        Verb::Service => {
            out.push_str(&format!("s={s}\n"));
            // charly's supervisord (the box's init) answers on its own socket, named by its
            // config (as `service.status` asks it); another supervisord by the default config.
            out.push_str(&format!(
                "if [ -f {conf} ]; then c='-c {conf}'; else c=; fi\n",
                conf = crate::project::runtime::SUPERVISORD_CONF
            ));
            out.push_str(
                "if command -v supervisorctl >/dev/null 2>&1; then echo \"supervisor:$(supervisorctl $c status \"$s\" 2>&1)\"; exit 0; fi\n\
                 if command -v systemctl >/dev/null 2>&1; then\n\
                 \x20 echo \"active:$(systemctl is-active \"$s\" 2>&1)\"; echo \"enabled:$(systemctl is-enabled \"$s\" 2>&1)\"; exit 0\n\
                 fi\n",
            );
            out.push_str(&format!("echo '{MISSING}supervisorctl or systemctl' >&2; exit 127\n"));
        }
        Verb::Port => {
            out.push_str(
                "if command -v ss >/dev/null 2>&1; then ss -tlnH; exit 0; fi\n\
                 if command -v netstat >/dev/null 2>&1; then netstat -tln; exit 0; fi\n",
            );
            out.push_str(&format!("echo '{MISSING}ss or netstat' >&2; exit 127\n"));
        }
        Verb::Process => {
            out.push_str(&format!("n={s}\n"));
            // /proc, not pgrep (Debian minbase has none) nor pidof (which misses programs run
            // by an interpreter, as supervisord is): a process whose comm is the name, or whose
            // program or first argument (a script) has it as its file name. This shell itself
            // (and its subshells, sharing its cmdline) is left out.
            out.push_str(
                "[ -d /proc/self ] || { echo 'needs /proc (not mounted in the container)' >&2; exit 127; }\n\
                 me=$(tr '\\0' ' ' < /proc/$$/cmdline)\n\
                 for d in /proc/[0-9]*; do\n\
                 \x20 c=$(cat \"$d/comm\" 2>/dev/null) || continue\n\
                 \x20 a=$(tr '\\0' ' ' < \"$d/cmdline\" 2>/dev/null)\n\
                 \x20 [ \"$a\" = \"$me\" ] && continue\n\
                 \x20 if [ \"$c\" = \"$n\" ]; then echo \"${d#/proc/}\"; continue; fi\n\
                 \x20 set -f; set -- $a; set +f\n\
                 \x20 for w in \"$1\" \"$2\"; do [ -n \"$w\" ] && [ \"${w##*/}\" = \"$n\" ] && { echo \"${d#/proc/}\"; break; }; done\n\
                 done\n\
                 exit 0\n",
            );
        }
        Verb::Command => out.push_str(&step.subject),
        Verb::User => {
            out.push_str(&format!("u={s}\n"));
            out.push_str(
                "if command -v getent >/dev/null 2>&1; then line=$(getent passwd \"$u\"); \
                 else line=$(awk -F: -v u=\"$u\" '$1==u' /etc/passwd); fi\n\
                 if [ -z \"$line\" ]; then echo absent; exit 0; fi\necho \"passwd:$line\"\n",
            );
            if step.lists.contains_key("groups") {
                out.push_str(&need(&["id"], "id"));
                out.push_str("echo \"groups:$(id -Gn \"$u\")\"\n");
            }
        }
        Verb::Group => {
            out.push_str(&format!("g={s}\n"));
            out.push_str(
                "if command -v getent >/dev/null 2>&1; then line=$(getent group \"$g\"); \
                 else line=$(awk -F: -v g=\"$g\" '$1==g' /etc/group); fi\n\
                 if [ -z \"$line\" ]; then echo absent; exit 0; fi\necho \"group:$line\"\n",
            );
        }
        Verb::Interface => {
            out.push_str(&format!("i={s}\n"));
            out.push_str("if [ ! -e \"/sys/class/net/$i\" ]; then echo absent; exit 0; fi\n");
            out.push_str("echo \"mtu:$(cat \"/sys/class/net/$i/mtu\")\"\n");
            if step.lists.contains_key("addrs") {
                out.push_str(&need(&["ip", "ifconfig"], "ip or ifconfig"));
                out.push_str(
                    "echo addrs:\nif command -v ip >/dev/null 2>&1; then ip addr show dev \"$i\"; else ifconfig \"$i\"; fi\n",
                );
            }
        }
        Verb::KernelParam => {
            out.push_str(&format!("k={s}\n"));
            out.push_str(
                "if command -v sysctl >/dev/null 2>&1; then sysctl -n \"$k\"; exit $?; fi\n\
                 f=\"/proc/sys/$(echo \"$k\" | tr . /)\"\n\
                 if [ -r \"$f\" ]; then cat \"$f\"; else echo \"no such kernel parameter: $k\" >&2; exit 1; fi\n",
            );
        }
        Verb::Mount => {
            out.push_str(&format!("m={s}\n"));
            out.push_str(
                "line=$(awk -v m=\"$m\" '$2==m {l=$1\" \"$3\" \"$4} END{print l}' /proc/mounts)\n\
                 if [ -z \"$line\" ]; then echo absent; else echo \"mount:$line\"; fi\n",
            );
        }
        Verb::Http | Verb::Dns | Verb::Addr | Verb::Matching => return None,
    }
    Some(out)
}

/// The failures of `step` given what its script printed (empty: it passed). A missing tool
/// is one failure naming it; a script that failed otherwise is one failure with its stderr.
pub(super) fn judge(step: &SystemStep, out: &ProbeOutput) -> Vec<String> {
    let verb = step.verb();
    let subject = &step.subject;
    if let Some(tools) = out.stderr.lines().find_map(|l| l.strip_prefix(MISSING)) {
        return vec![format!("{verb} {subject}: the container has no {tools}, which this check needs")];
    }
    if verb == Verb::Command {
        return Vec::new(); // exit_status/stdout/stderr are the caller's matchers
    }
    if out.status != 0 {
        let why = out.stderr.trim();
        let why = if why.is_empty() { format!("exit status {}", out.status) } else { why.to_owned() };
        return vec![format!("{verb} {subject}: the probe failed: {why}")];
    }
    let tagged = |tag: &str| out.stdout.lines().find_map(|l| l.strip_prefix(tag)).map(str::to_owned);
    let absent = out.stdout.lines().next() == Some("absent");
    let mut fails = Vec::new();
    match verb {
        Verb::File => {
            if let Some(f) = presence(step, "exists", absent, &format!("file {subject}")) {
                return f;
            }
            let stat = tagged("stat:").unwrap_or_default();
            let parts: Vec<&str> = stat.split('|').collect();
            let [kind, mode, owner, group] = parts.as_slice() else {
                return vec![format!("file {subject}: unreadable stat output {stat:?}")];
            };
            if let Some(want) = step.text("filetype") {
                let word = FILETYPES.iter().find(|(k, _)| *k == want).map_or(want, |(_, w)| *w);
                let ok = if want == "device" { kind.contains("special file") } else { kind == &word };
                if !ok {
                    fails.push(format!("file {subject} is a {kind}, not a {want}"));
                }
            }
            let mode = format!("{:04o}", u32::from_str_radix(mode, 8).unwrap_or(0));
            fails.extend(check("mode", &octal(step.matchers("mode")), &mode));
            fails.extend(check("owner", step.matchers("owner"), owner));
            fails.extend(check("group", step.matchers("group_of"), group));
            fails.extend(check("sha256", step.matchers("sha256"), &tagged("sha256:").unwrap_or_default()));
            if step.matchers.contains_key("contains") {
                let content = out.stdout.split_once("content:\n").map_or("", |(_, c)| c);
                fails.extend(check("content", step.matchers("contains"), content));
            }
        }
        Verb::Package => {
            let installed = !absent;
            let want = step.flag("installed", true);
            if installed != want {
                let state = if installed { "is installed" } else { "is not installed" };
                return vec![format!("package {subject} {state}")];
            }
            if installed {
                fails.extend(check(
                    "version",
                    step.matchers("versions"),
                    &tagged("installed:").unwrap_or_default(),
                ));
            }
        }
        Verb::Service => {
            let (running, enabled, detail) = if let Some(s) = tagged("supervisor:") {
                let known = !s.contains("no such process") && !s.contains("ERROR");
                (s.contains("RUNNING"), known, s)
            } else {
                let active = tagged("active:").unwrap_or_default();
                let enabled = tagged("enabled:").unwrap_or_default();
                (active == "active", enabled == "enabled", format!("{active}, {enabled}"))
            };
            let want = step.flag("running", true);
            if running != want {
                let state = if running { "is running" } else { "is not running" };
                fails.push(format!("service {subject} {state} ({})", detail.trim()));
            }
            if step.has_flag("enabled") && enabled != step.flag("enabled", true) {
                let state = if enabled { "is enabled" } else { "is not enabled" };
                fails.push(format!("service {subject} {state} ({})", detail.trim()));
            }
        }
        Verb::Port => {
            let suffix = format!(":{subject}");
            let listening = out
                .stdout
                .lines()
                .filter_map(|l| l.split_whitespace().nth(3))
                .any(|local| local.ends_with(&suffix));
            if listening != step.flag("listening", true) {
                let state = if listening { "is listening" } else { "is not listening" };
                fails.push(format!("port {subject} {state} in the container"));
            }
        }
        Verb::Process => {
            let running = !out.stdout.trim().is_empty();
            if running != step.flag("running", true) {
                let state = if running { "is running" } else { "is not running" };
                fails.push(format!("process {subject} {state}"));
            }
        }
        Verb::User => {
            if let Some(f) = presence(step, "exists", absent, &format!("user {subject}")) {
                return f;
            }
            let line = tagged("passwd:").unwrap_or_default();
            let fields: Vec<&str> = line.split(':').collect();
            let field = |i: usize| fields.get(i).copied().unwrap_or_default();
            fails.extend(check("uid", step.matchers("uid"), field(2)));
            fails.extend(check("gid", step.matchers("gid"), field(3)));
            fails.extend(check("home", step.matchers("home"), field(5)));
            fails.extend(check("shell", step.matchers("shell"), field(6)));
            let groups = tagged("groups:").unwrap_or_default();
            let have: Vec<&str> = groups.split_whitespace().collect();
            for g in step.list("groups").iter().filter(|g| !have.contains(&g.as_str())) {
                fails.push(format!("user {subject} is not in group {g} (groups: {groups})"));
            }
        }
        Verb::Group => {
            if let Some(f) = presence(step, "exists", absent, &format!("group {subject}")) {
                return f;
            }
            let line = tagged("group:").unwrap_or_default();
            fails.extend(check("gid", step.matchers("gid"), line.split(':').nth(2).unwrap_or_default()));
        }
        Verb::Interface => {
            if let Some(f) = presence(step, "exists", absent, &format!("interface {subject}")) {
                return f;
            }
            fails.extend(check("mtu", step.matchers("mtu"), &tagged("mtu:").unwrap_or_default()));
            let addrs = out.stdout.split_once("addrs:\n").map_or("", |(_, a)| a);
            for a in step.list("addrs").iter().filter(|a| !addrs.contains(a.as_str())) {
                fails.push(format!("interface {subject} has no address {a}"));
            }
        }
        Verb::KernelParam => fails.extend(check("value", step.matchers("value"), out.stdout.trim())),
        Verb::Mount => {
            if let Some(f) = presence(step, "exists", absent, &format!("mount {subject}")) {
                return f;
            }
            let line = tagged("mount:").unwrap_or_default();
            let parts: Vec<&str> = line.splitn(3, ' ').collect();
            let part = |i: usize| parts.get(i).copied().unwrap_or_default();
            fails.extend(check("source", step.matchers("mount_source"), part(0)));
            fails.extend(check("filesystem", step.matchers("filesystem"), part(1)));
            let opts: Vec<&str> = part(2).split(',').collect();
            for o in step.list("opts").iter().filter(|o| !opts.contains(&o.as_str())) {
                fails.push(format!("mount {subject} lacks option {o} (options: {})", part(2)));
            }
        }
        Verb::Command | Verb::Http | Verb::Dns | Verb::Addr | Verb::Matching => {}
    }
    fails
}

/// The failures of `matchers` on `actual`, each naming `what`.
fn check(what: &str, matchers: &[Matcher], actual: &str) -> Vec<String> {
    matchers.iter().filter_map(|m| m.check(what, actual).err()).collect()
}

/// `exists:` (default true) against what the probe saw; `Some` ends the judgement.
fn presence(step: &SystemStep, key: &str, absent: bool, what: &str) -> Option<Vec<String>> {
    let want = step.flag(key, true);
    match (want, absent) {
        (true, true) => Some(vec![format!("{what} does not exist")]),
        (false, false) => Some(vec![format!("{what} exists")]),
        (false, true) => Some(Vec::new()),
        (true, false) => None,
    }
}

/// `mode:` matchers with octal values written as four digits (`644` and `0644` agree).
fn octal(matchers: &[Matcher]) -> Vec<Matcher> {
    let norm = |s: &str| {
        u32::from_str_radix(s.trim(), 8).map(|m| format!("{m:04o}")).unwrap_or_else(|_| s.to_owned())
    };
    matchers
        .iter()
        .map(|m| match m {
            Matcher::Equals(s) => Matcher::Equals(norm(s)),
            Matcher::NotEquals(s) => Matcher::NotEquals(norm(s)),
            other => other.clone(),
        })
        .collect()
}
