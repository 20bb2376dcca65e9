//! An image on top of the busybox base: a dpkg database with one package, a user and group
//! `app`, a served file. (Busybox's shell runs its own applets even without their links, so
//! a missing tool is shown with one busybox lacks: `supervisorctl`/`systemctl`.)

use std::process::{Command, Stdio};
use std::sync::OnceLock;

use crate::util::{BUSYBOX, require_image};

/// The fixture: `hello` 2.10-3 in /var/lib/dpkg/status, user `app` (1234, /home/app,
/// /bin/sh) in group `app` (1234), /srv/www/index.html (`hello world\n`, mode 0640).
pub(crate) const FIXTURE: &str = "localhost/charly-check-fixture:3";

const CONTAINERFILE: &str = "FROM localhost/charly-busybox:latest
RUN mkdir -p /var/lib/dpkg /srv/www /home/app \\
 && printf 'Package: hello\\nStatus: install ok installed\\nVersion: 2.10-3\\n\\nPackage: gone\\nStatus: deinstall ok config-files\\nVersion: 1.0\\n' > /var/lib/dpkg/status \\
 && echo 'hello world' > /srv/www/index.html && chmod 0640 /srv/www/index.html \\
 && echo 'app:x:1234:1234:App:/home/app:/bin/sh' >> /etc/passwd && echo 'app:x:1234:' >> /etc/group
";

/// Builds the fixture image once (if podman lacks it).
pub(crate) fn images() {
    static BUILT: OnceLock<()> = OnceLock::new();
    BUILT.get_or_init(|| {
        require_image(BUSYBOX);
        build(FIXTURE, CONTAINERFILE);
    });
}

fn build(tag: &str, containerfile: &str) {
    let exists = Command::new("podman").args(["image", "exists", tag]).status().unwrap().success();
    if exists {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("Containerfile"), containerfile).unwrap();
    let out = Command::new("podman")
        .args(["build", "-t", tag, "-f"])
        .arg(dir.path().join("Containerfile"))
        .arg(dir.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "podman build {tag}: {}", String::from_utf8_lossy(&out.stderr));
}
