//! `vm.*` against real qemu (10.0, TCG here), podman and the Debian VM base image that
//! `scripts/runtimes.sh` builds: each test has its own HOME (so its VMs live in that HOME's
//! `.local/share/charly/vm`), project and box `test-vm-<what>`, picks free ports on 127.0.0.1,
//! and kills its qemu and removes its image when it ends. They run as root (`vm build`).

mod util;

/// The end-to-end case with a real box: build, create, start, ssh, console, kill -9,
/// stop by ACPI, destroy.
mod e2e;

/// The bad input and faults: clear errors, nothing orphaned.
mod faults;

/// The libvirt backend, against a session daemon run as an unprivileged uid.
mod libvirt;

/// A running VM's faults from issue 17's trial: auth failures told apart from a server not up,
/// a timed-out command stopped in the guest, a second console attach refused.
mod running;
