//! `charly-overlay daemon`: one Wayland client that owns every overlay, each a
//! `zwlr_layer_shell_v1` surface on the overlay layer (above fullscreen windows), click-through
//! (an empty input region) and outside every exclusive zone. Requests come over a unix socket
//! ([`crate::socket`]) and reach this loop through a calloop channel; a 50 ms timer ends the
//! overlays whose time is up, steps countdowns and fades.
//!
//! `show` is answered once the surface is configured, drawn, committed and a round trip to the
//! compositor has passed, so a screenshot taken after the answer shows it. The daemon exits
//! when the compositor goes away (its socket is removed then).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use smithay_client_toolkit::compositor::{CompositorHandler, CompositorState, Region};
use smithay_client_toolkit::output::{OutputHandler, OutputState};
use smithay_client_toolkit::reexports::calloop::channel::{self, Channel};
use smithay_client_toolkit::reexports::calloop::timer::{TimeoutAction, Timer};
use smithay_client_toolkit::reexports::calloop::{EventLoop, LoopHandle};
use smithay_client_toolkit::reexports::calloop_wayland_source::WaylandSource;
use smithay_client_toolkit::reexports::client::globals::registry_queue_init;
use smithay_client_toolkit::reexports::client::protocol::{wl_output, wl_shm, wl_surface};
use smithay_client_toolkit::reexports::client::{Connection, QueueHandle};
use smithay_client_toolkit::registry::{ProvidesRegistryState, RegistryState};
use smithay_client_toolkit::shell::WaylandSurface as _;
use smithay_client_toolkit::shell::wlr_layer::{
    Anchor, KeyboardInteractivity, Layer, LayerShell, LayerShellHandler, LayerSurface, LayerSurfaceConfigure,
};
use smithay_client_toolkit::shm::slot::{Buffer, SlotPool};
use smithay_client_toolkit::shm::{Shm, ShmHandler};
use smithay_client_toolkit::{delegate_registry, registry_handlers};

use crate::render::{Fonts, Look, MARGIN, place};
use crate::spec::{Kind, Position, Reply, Request, Shown, Spec};

/// A request and where its answer goes.
pub(crate) type Job = (Request, mpsc::Sender<Reply>);

/// How often the timer looks at the overlays.
const TICK: Duration = Duration::from_millis(50);

/// One overlay on the output.
struct Overlay {
    name: String,
    spec: Spec,
    look: Look,
    layer: LayerSurface,
    size: (i32, i32),
    buffer: Option<Buffer>,
    configured: bool,
    shown: Instant,
    /// What was last drawn (the countdown's number, the fade's alpha), to redraw on change.
    drawn: Option<(u64, u32)>,
    /// The `show` waiting for the first frame.
    waiting: Option<mpsc::Sender<Reply>>,
}

struct Daemon {
    registry: RegistryState,
    outputs: OutputState,
    compositor: CompositorState,
    layer_shell: LayerShell,
    shm: Shm,
    pool: SlotPool,
    fonts: Result<Fonts, String>,
    overlays: BTreeMap<String, Overlay>,
    counter: u32,
    /// Overlays drawn since the last round trip whose `show` waits.
    answer: Vec<String>,
    qh: QueueHandle<Daemon>,
}

/// Runs the daemon on the session's Wayland display, listening on `socket`; returns when the
/// compositor goes away.
///
/// # Errors
///
/// No compositor, no layer shell, the socket cannot be made.
pub(crate) fn run(socket: PathBuf, font: Option<&str>) -> Result<(), String> {
    let conn = Connection::connect_to_env().map_err(|e| {
        format!("cannot connect to the Wayland display (WAYLAND_DISPLAY, XDG_RUNTIME_DIR): {e}")
    })?;
    let (globals, queue) =
        registry_queue_init::<Daemon>(&conn).map_err(|e| format!("the Wayland registry: {e}"))?;
    let qh = queue.handle();
    let compositor = CompositorState::bind(&globals, &qh).map_err(|e| format!("wl_compositor: {e}"))?;
    let layer_shell = LayerShell::bind(&globals, &qh).map_err(|e| {
        format!("the compositor has no wlr-layer-shell (zwlr_layer_shell_v1), which overlays need: {e}")
    })?;
    let shm = Shm::bind(&globals, &qh).map_err(|e| format!("wl_shm: {e}"))?;
    let pool = SlotPool::new(256 * 256 * 4, &shm).map_err(|e| format!("a shared-memory pool: {e}"))?;
    let mut event_loop: EventLoop<'static, Daemon> =
        EventLoop::try_new().map_err(|e| format!("the event loop: {e}"))?;
    let handle: LoopHandle<'static, Daemon> = event_loop.handle();
    WaylandSource::new(conn.clone(), queue)
        .insert(handle.clone())
        .map_err(|e| format!("the Wayland source: {e}"))?;
    let (sender, jobs): (channel::Sender<Job>, Channel<Job>) = channel::channel();
    handle
        .insert_source(jobs, |event, _, daemon: &mut Daemon| {
            if let channel::Event::Msg((request, reply)) = event {
                daemon.handle(request, reply);
            }
        })
        .map_err(|e| format!("the request channel: {e}"))?;
    handle
        .insert_source(Timer::from_duration(TICK), |_, _, daemon: &mut Daemon| {
            daemon.tick();
            TimeoutAction::ToDuration(TICK)
        })
        .map_err(|e| format!("the timer: {e}"))?;
    let mut daemon = Daemon {
        registry: RegistryState::new(&globals),
        outputs: OutputState::new(&globals, &qh),
        compositor,
        layer_shell,
        shm,
        pool,
        fonts: Fonts::load(font),
        overlays: BTreeMap::new(),
        counter: 0,
        answer: Vec::new(),
        qh,
    };
    // The outputs' sizes arrive with the first round trips.
    event_loop.dispatch(Some(Duration::from_millis(100)), &mut daemon).map_err(|e| e.to_string())?;
    let listener = crate::socket::listen(&socket)?;
    std::thread::spawn(move || crate::socket::serve(listener, sender));
    let result = loop {
        if let Err(e) = event_loop.dispatch(Some(Duration::from_millis(200)), &mut daemon) {
            break Err(format!("the Wayland connection ended: {e}"));
        }
        if !daemon.answer.is_empty() {
            // The commits are in the compositor before `show` answers.
            if let Err(e) = conn.roundtrip() {
                break Err(format!("the Wayland connection ended: {e}"));
            }
            daemon.answer_shown();
        }
    };
    let _ = std::fs::remove_file(&socket);
    result
}

impl Daemon {
    fn output(&self) -> Option<(String, (i32, i32))> {
        self.outputs.outputs().find_map(|o| {
            let info = self.outputs.info(&o)?;
            let size =
                info.logical_size.or_else(|| info.modes.iter().find(|m| m.current).map(|m| m.dimensions))?;
            Some((info.name.clone().unwrap_or_else(|| "?".into()), size))
        })
    }

    fn shown(&self, o: &Overlay) -> Shown {
        let output = self.output().map_or((0, 0), |(_, size)| size);
        let (x, y, width, height) = match (o.spec.kind, o.look.region) {
            (Kind::Fade, _) => (0, 0, output.0, output.1),
            (Kind::Highlight, Some(r)) => (r.x, r.y, r.width, r.height),
            _ => {
                let (x, y) = place(o.look.position, o.size, output);
                (x, y, o.size.0, o.size.1)
            }
        };
        let remaining_ms = o.look.lasts.map(|d| d.saturating_sub(o.shown.elapsed()).as_millis() as u64);
        Shown {
            name: o.name.clone(),
            kind: o.spec.kind,
            text: o.spec.text.clone(),
            x,
            y,
            width,
            height,
            remaining_ms,
        }
    }

    fn all(&self) -> Vec<Shown> {
        self.overlays.values().map(|o| self.shown(o)).collect()
    }

    fn handle(&mut self, request: Request, reply: mpsc::Sender<Reply>) {
        let answer = match request {
            Request::Show(spec) => match self.show(spec, reply.clone()) {
                Ok(()) => return,
                Err(e) => Reply { error: Some(e), ..Reply::default() },
            },
            Request::Hide { name, all } => {
                let gone: Vec<String> = match (&name, all) {
                    (_, true) => self.overlays.keys().cloned().collect(),
                    (Some(n), false) if self.overlays.contains_key(n) => vec![n.clone()],
                    (Some(n), false) => {
                        let names: Vec<&str> = self.overlays.keys().map(String::as_str).collect();
                        let shown = if names.is_empty() { "none".into() } else { names.join(", ") };
                        let error = format!("no overlay named {n:?} (shown: {shown})");
                        let _ = reply.send(Reply { error: Some(error), ..Reply::default() });
                        return;
                    }
                    (None, false) => Vec::new(),
                };
                let overlays = gone.iter().filter_map(|n| self.remove(n)).collect();
                Reply { ok: true, overlays, ..Reply::default() }
            }
            Request::List => Reply { ok: true, overlays: self.all(), ..Reply::default() },
            Request::Status => Reply {
                ok: true,
                overlays: self.all(),
                pid: Some(std::process::id()),
                output: self.output().map(|(name, (w, h))| format!("{name} {w}x{h}")),
                font: self.fonts.as_ref().ok().map(|f| f.path.clone()),
                ..Reply::default()
            },
        };
        let _ = reply.send(answer);
    }

    fn show(&mut self, spec: Spec, reply: mpsc::Sender<Reply>) -> Result<(), String> {
        spec.check()?;
        let look = Look::of(&spec);
        let needs_font = !matches!(spec.kind, Kind::Highlight | Kind::Fade);
        let fonts = match (&self.fonts, needs_font) {
            (Ok(f), _) => Some(f),
            (Err(e), true) => return Err(e.clone()),
            (Err(_), false) => None,
        };
        let size = look.size(fonts);
        let name = match &spec.name {
            Some(n) => n.clone(),
            None => loop {
                self.counter += 1;
                let n = format!("{}-{}", spec.kind.word(), self.counter);
                if !self.overlays.contains_key(&n) {
                    break n;
                }
            },
        };
        if let (Some((w, h)), Some((_, (ow, oh)))) = (size, self.output())
            && spec.kind == Kind::Highlight
            && let Some(r) = look.region
            && (r.x + w > ow || r.y + h > oh)
        {
            return Err(format!(
                "--region {},{},{},{} is off the output ({ow}x{oh})",
                r.x, r.y, r.width, r.height
            ));
        }
        self.remove(&name);
        let surface = self.compositor.create_surface(&self.qh);
        // Click-through: an empty input region.
        if let Ok(region) = Region::new(&self.compositor) {
            surface.set_input_region(Some(region.wl_region()));
        }
        let layer = self.layer_shell.create_layer_surface(
            &self.qh,
            surface,
            Layer::Overlay,
            Some(format!("charly-overlay {name}")),
            None,
        );
        layer.set_keyboard_interactivity(KeyboardInteractivity::None);
        layer.set_exclusive_zone(-1);
        let (w, h) = size.unwrap_or((0, 0));
        layer.set_size(w as u32, h as u32);
        match (spec.kind, look.region) {
            (Kind::Fade, _) => layer.set_anchor(Anchor::all()),
            (Kind::Highlight, Some(r)) => {
                layer.set_anchor(Anchor::TOP | Anchor::LEFT);
                layer.set_margin(r.y, 0, 0, r.x);
            }
            _ => {
                let anchor = match look.position {
                    Position::Center => Anchor::empty(),
                    Position::Top => Anchor::TOP,
                    Position::Bottom => Anchor::BOTTOM,
                    Position::Left => Anchor::LEFT,
                    Position::Right => Anchor::RIGHT,
                    Position::TopLeft => Anchor::TOP | Anchor::LEFT,
                    Position::TopRight => Anchor::TOP | Anchor::RIGHT,
                    Position::BottomLeft => Anchor::BOTTOM | Anchor::LEFT,
                    Position::BottomRight => Anchor::BOTTOM | Anchor::RIGHT,
                };
                layer.set_anchor(anchor);
                layer.set_margin(MARGIN, MARGIN, MARGIN, MARGIN);
            }
        }
        layer.commit();
        self.overlays.insert(
            name.clone(),
            Overlay {
                name,
                spec,
                look,
                layer,
                size: (w, h),
                buffer: None,
                configured: false,
                shown: Instant::now(),
                drawn: None,
                waiting: Some(reply),
            },
        );
        Ok(())
    }

    fn remove(&mut self, name: &str) -> Option<Shown> {
        let shown = self.overlays.get(name).map(|o| self.shown(o));
        if let Some(mut o) = self.overlays.remove(name)
            && let Some(waiting) = o.waiting.take()
        {
            let _ = waiting.send(Reply { error: Some(format!("{name} was replaced")), ..Reply::default() });
        }
        shown
    }

    fn draw(&mut self, name: &str) {
        let Some(o) = self.overlays.get_mut(name) else { return };
        let (w, h) = o.size;
        if !o.configured || w <= 0 || h <= 0 {
            return;
        }
        let now = o.shown.elapsed();
        let fonts = self.fonts.as_ref().ok();
        let px = o.look.paint(fonts, w, h, now);
        let Ok((buffer, canvas)) = self.pool.create_buffer(w, h, w * 4, wl_shm::Format::Argb8888) else {
            return;
        };
        for (dst, p) in canvas.chunks_exact_mut(4).zip(px) {
            dst.copy_from_slice(&p.to_le_bytes());
        }
        let surface = o.layer.wl_surface();
        surface.damage_buffer(0, 0, w, h);
        if buffer.attach_to(surface).is_err() {
            return;
        }
        o.layer.commit();
        o.buffer = Some(buffer);
        o.drawn = Some(stamp(&o.look, now));
        if o.waiting.is_some() {
            self.answer.push(name.to_owned());
        }
    }

    fn answer_shown(&mut self) {
        for name in std::mem::take(&mut self.answer) {
            let shown = self.overlays.get(&name).map(|o| self.shown(o));
            if let (Some(o), Some(shown)) = (self.overlays.get_mut(&name), shown)
                && let Some(waiting) = o.waiting.take()
            {
                let _ = waiting.send(Reply { ok: true, overlays: vec![shown], ..Reply::default() });
            }
        }
    }

    fn tick(&mut self) {
        let names: Vec<String> = self.overlays.keys().cloned().collect();
        for name in names {
            let Some(o) = self.overlays.get(&name) else { continue };
            let now = o.shown.elapsed();
            if o.look.lasts.is_some_and(|d| now >= d) && o.waiting.is_none() {
                self.remove(&name);
            } else if o.configured && o.drawn.is_some_and(|d| d != stamp(&o.look, now)) {
                self.draw(&name);
            }
        }
    }
}

/// What a picture depends on over time: the countdown's second, the fade's alpha (in 1/64).
fn stamp(look: &Look, now: Duration) -> (u64, u32) {
    match look.kind {
        Kind::Countdown => (now.as_secs(), 0),
        Kind::Fade => (0, (look.alpha_at(now) * 64.0) as u32),
        _ => (0, 0),
    }
}

impl LayerShellHandler for Daemon {
    fn closed(&mut self, _: &Connection, _: &QueueHandle<Self>, layer: &LayerSurface) {
        let name = self.overlays.iter().find(|(_, o)| &o.layer == layer).map(|(n, _)| n.clone());
        if let Some(name) = name {
            self.remove(&name);
        }
    }

    fn configure(
        &mut self,
        _: &Connection,
        _: &QueueHandle<Self>,
        layer: &LayerSurface,
        configure: LayerSurfaceConfigure,
        _serial: u32,
    ) {
        let name = self.overlays.iter().find(|(_, o)| &o.layer == layer).map(|(n, _)| n.clone());
        let Some(name) = name else { return };
        if let Some(o) = self.overlays.get_mut(&name) {
            let (w, h) = configure.new_size;
            if w > 0 && h > 0 {
                o.size = (w as i32, h as i32);
            }
            o.configured = true;
        }
        self.draw(&name);
    }
}

impl CompositorHandler for Daemon {
    fn scale_factor_changed(
        &mut self,
        _: &Connection,
        _: &QueueHandle<Self>,
        _: &wl_surface::WlSurface,
        _: i32,
    ) {
    }
    fn transform_changed(
        &mut self,
        _: &Connection,
        _: &QueueHandle<Self>,
        _: &wl_surface::WlSurface,
        _: wl_output::Transform,
    ) {
    }
    fn frame(&mut self, _: &Connection, _: &QueueHandle<Self>, _: &wl_surface::WlSurface, _: u32) {}
    fn surface_enter(
        &mut self,
        _: &Connection,
        _: &QueueHandle<Self>,
        _: &wl_surface::WlSurface,
        _: &wl_output::WlOutput,
    ) {
    }
    fn surface_leave(
        &mut self,
        _: &Connection,
        _: &QueueHandle<Self>,
        _: &wl_surface::WlSurface,
        _: &wl_output::WlOutput,
    ) {
    }
}

impl OutputHandler for Daemon {
    fn output_state(&mut self) -> &mut OutputState {
        &mut self.outputs
    }
    fn new_output(&mut self, _: &Connection, _: &QueueHandle<Self>, _: wl_output::WlOutput) {}
    fn update_output(&mut self, _: &Connection, _: &QueueHandle<Self>, _: wl_output::WlOutput) {}
    fn output_destroyed(&mut self, _: &Connection, _: &QueueHandle<Self>, _: wl_output::WlOutput) {}
}

impl ShmHandler for Daemon {
    fn shm_state(&mut self) -> &mut Shm {
        &mut self.shm
    }
}

delegate_registry!(Daemon);

impl ProvidesRegistryState for Daemon {
    fn registry(&mut self) -> &mut RegistryState {
        &mut self.registry
    }
    registry_handlers![OutputState];
}

smithay_client_toolkit::delegate_dispatch2!(Daemon);
