//! `agent-memory serve`: the local server (HTTP API, live viewer, MCP over HTTP, worker) on a
//! current-thread runtime, its store work on a few blocking threads; `--status` and `--stop`
//! for the one instance a home may run. The hook path never reaches this module.

use std::net::{IpAddr, TcpListener};
use std::time::Duration;

use agent_memory_serve::http::guard::Limits;
use agent_memory_serve::http::{ServeOptions, serve, stop_signal};
use agent_memory_serve::instance::{Instance, ServeState};
use anyhow::Context as _;

use super::Context;
use crate::cli::ServeArgs;
use crate::output;

/// How long `--stop` waits for the server to finish what it is doing.
const STOP_WAIT: Duration = Duration::from_secs(60);

/// Threads store work may use at once: enough for many concurrent searches on a small machine.
const BLOCKING_THREADS: usize = 8;

pub fn run(ctx: &Context, args: ServeArgs) -> anyhow::Result<()> {
    let instance = Instance::new(&ctx.home);
    if args.status {
        return status(&instance, args.json);
    }
    if args.stop {
        let stopped = instance.stop(STOP_WAIT)?;
        if args.json {
            output::line(&serde_json::json!({ "stopped": stopped }).to_string())?;
        } else if stopped {
            output::line("agent-memory serve stopped")?;
        } else {
            output::line("agent-memory serve is not running")?;
        }
        return Ok(());
    }
    if args.detach {
        return detach(ctx, &instance, &args);
    }
    let held = instance.lock()?;
    let token = instance.token()?;
    let serve_config = &ctx.config.serve;
    let ip: IpAddr = serve_config.bind.trim().parse().with_context(|| {
        format!(
            "`[serve] bind = \"{}\"` is not an IP address; use 127.0.0.1 (the default)",
            serve_config.bind
        )
    })?;
    let port = args.port.unwrap_or(serve_config.port);
    let listener = TcpListener::bind((ip, port)).with_context(|| {
        format!("cannot listen on {ip}:{port}; pick another port with --port or `[serve] port`")
    })?;
    let addr = listener.local_addr().context("cannot read the address listened on")?;
    let host = if ip.is_loopback() || ip.is_unspecified() {
        format!("127.0.0.1:{}", addr.port())
    } else {
        addr.to_string()
    };
    let url = format!("http://{host}");
    instance.write_state(&ServeState {
        pid: std::process::id(),
        url: url.clone(),
        port: addr.port(),
        started_at_ms: agent_memory_core::time::now_ms(),
    })?;
    tracing::info!(%url, "serving");
    let said = if args.json {
        output::line(&serde_json::json!({ "url": url, "pid": std::process::id() }).to_string())
    } else {
        // One address, the one that opens: the viewer reads nothing without the local token,
        // so the address carries it. It is printed to the person who started the server, never
        // logged or served to a page.
        output::line(&format!("agent-memory serve: viewer at {url}/?token={token}"))
    };
    // Whoever started the server may have stopped reading (a closed pipe): it serves on.
    if let Err(err) = said {
        tracing::debug!(%err, "could not print where serve listens");
    }

    let settings = ctx.serve_settings()?;
    let pass = (!args.no_worker).then(|| worker_pass(ctx));
    let options = ServeOptions {
        settings,
        listener,
        token,
        pass,
        work_interval: Duration::from_secs(serve_config.work_interval_seconds.max(1)),
        limits: Limits::default(),
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .max_blocking_threads(BLOCKING_THREADS)
        .build()
        .context("cannot start the server's runtime")?;
    let served = runtime.block_on(serve(options, stop_signal()));
    drop(held);
    served?;
    Ok(())
}

/// How long `--detach` waits for the server it started to listen.
const DETACH_WAIT: Duration = Duration::from_secs(15);

/// `serve --detach`: the same server in a process of its own (its own process group, so the
/// terminal closing leaves it running), then its address once it listens.
fn detach(ctx: &Context, instance: &Instance, args: &ServeArgs) -> anyhow::Result<()> {
    if instance.is_running() {
        anyhow::bail!(
            "agent-memory serve is already running for this home; `agent-memory serve --status` says where"
        );
    }
    let exe = std::env::current_exe().context("cannot find the agent-memory binary to start")?;
    let mut command = std::process::Command::new(exe);
    command.arg("serve");
    if let Some(port) = args.port {
        command.args(["--port", &port.to_string()]);
    }
    if args.no_worker {
        command.arg("--no-worker");
    }
    command
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let mut child = command.spawn().context("cannot start agent-memory serve")?;
    let deadline = std::time::Instant::now() + DETACH_WAIT;
    loop {
        if let Some(state) = instance.state().filter(|s| s.pid == child.id())
            && instance.is_running()
        {
            let token = instance.token()?;
            if args.json {
                output::line(
                    &serde_json::json!({ "url": state.url, "pid": state.pid }).to_string(),
                )?;
            } else {
                output::line(&format!(
                    "agent-memory serve: viewer at {}/?token={token} (pid {}; `agent-memory serve --stop` stops it)",
                    state.url, state.pid
                ))?;
            }
            return Ok(());
        }
        if let Some(status) = child.try_wait()? {
            anyhow::bail!(
                "agent-memory serve stopped at once ({status}); run `agent-memory serve` in the foreground to see why, or look in {}",
                ctx.home.root().join("logs").display()
            );
        }
        if std::time::Instant::now() >= deadline {
            anyhow::bail!(
                "agent-memory serve did not listen within {} s; `agent-memory serve --status` says whether it came up later",
                DETACH_WAIT.as_secs()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The worker's pass: `work --for-server` in a process of its own, on the same home. What a
/// pass reads and builds (a model's weights, a review backlog's candidates) goes back to the
/// system when that process ends instead of staying in the server's heap for its whole life,
/// and a pass that crashes takes only itself down. Its model is loaded only when it has
/// something to embed, so an idle pass costs a process start and a few queries.
fn worker_pass(ctx: &Context) -> agent_memory_serve::worker::Pass {
    let home = ctx.home.root().to_owned();
    Box::new(move || {
        let exe = std::env::current_exe()
            .map_err(|err| format!("cannot find the agent-memory binary to run a pass: {err}"))?;
        let mut command = std::process::Command::new(exe);
        command
            .args(["work", "--for-server"])
            .env(agent_memory_core::paths::HOME_ENV, &home)
            .stdin(std::process::Stdio::null());
        // Ctrl-C at the server's terminal stops the server once the pass is over (it waits
        // for it) rather than the pass halfway.
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let ran = command
            .output()
            .map_err(|err| format!("cannot start a work pass (`agent-memory work`): {err}"))?;
        let said = |bytes: &[u8]| String::from_utf8_lossy(bytes).trim().to_owned();
        if ran.status.success() {
            return Ok(said(&ran.stdout));
        }
        let why = said(&ran.stderr);
        let why = why.strip_prefix("agent-memory: ").unwrap_or(&why);
        Err(if why.is_empty() {
            format!("the work pass ended with {}", ran.status)
        } else {
            why.to_owned()
        })
    })
}

fn status(instance: &Instance, as_json: bool) -> anyhow::Result<()> {
    let health = instance.health();
    let running = instance.is_running();
    if as_json {
        let value = serde_json::json!({
            "running": running,
            "state": instance.state().filter(|_| running),
            "health": health.as_ref().map(|(_, h)| h),
        });
        output::line(&value.to_string())?;
        return Ok(());
    }
    match (running, health) {
        (true, Some((state, _))) => {
            // The viewer reads nothing without the token, so its one address comes with it.
            let pid = state.pid;
            match instance.token() {
                Ok(token) => output::line(&format!(
                    "agent-memory serve is running (pid {pid}): viewer at {}/?token={token}",
                    state.url
                ))?,
                Err(_) => output::line(&format!(
                    "agent-memory serve is running at {} (pid {pid})",
                    state.url
                ))?,
            }
        }
        (true, None) => output::line("agent-memory serve is running but does not answer yet")?,
        (false, _) => output::line("agent-memory serve is not running")?,
    }
    Ok(())
}
