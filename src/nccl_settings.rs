//! The NCCL settings tcpxr gives a value when the user left them unset, as aws-ofi-nccl sets
//! NCCL's defaults per platform, the speed NCCL is told for an interface that reports none, and
//! the GPU-buffer decision that rests on NCCL's own settings.
//! NCCL reads each of these while it sets up a communicator, after its net plugins' init, so
//! plugin's init applies them (through crate::env, which says why that point is safe); every one
//! is logged at INFO with why.
use crate::config::{self, Config};
use crate::error::{Error, Result};
use crate::transport::TransportKind;

/// One NCCL setting tcpxr gives: (name, value, why).
pub(crate) type Setting = (&'static str, &'static str, &'static str);

/// Sets each of `settings` (all unset) in the process environment and logs it; returns their
/// names. Called from plugin's first init only (crate::env).
pub(crate) fn apply(settings: &[Setting]) -> Vec<&'static str> {
    for &(key, value, why) in settings {
        crate::env::set(key, value);
        log::info!(target: "tcpxr::init", "{key} unset: set to {value} ({why})");
    }
    settings.iter().map(|&(key, _, _)| key).collect()
}

/// NCCL's settings that bound a communicator's channel count. NCCL applies a minimum after a
/// maximum, so a minimum of tcpxr's would override the user's maximum.
pub const CHANNEL_BOUNDS: [&str; 6] = [
    "NCCL_MIN_NCHANNELS",
    "NCCL_MAX_NCHANNELS",
    "NCCL_MIN_NRINGS",
    "NCCL_MAX_NRINGS",
    "NCCL_MIN_CTAS",
    "NCCL_MAX_CTAS",
];

/// NCCL settings whose defaults do not suit tcpxr, each given tcpxr's value when the user left it
/// unset (as aws-ofi-nccl sets NCCL defaults per platform): (name, value, why).
///
/// NCCL_MIN_NCHANNELS (only when no [`CHANNEL_BOUNDS`] variable is set and tcpxr's tuner acts on
/// this transport, since the two make one choice of channels, measured over the socket transport):
/// NCCL builds 4 channels
/// for tcpxr's 400 Gb/s device. With 8, the value of Google's TCPX recipe, NCCL's kernel and proxy
/// have twice the steps in flight: on one H200 under MPS an all_reduce of 512 MiB-1 GiB took 2-21 %
/// less time (at 128-256 MiB it was within the spread, slower in some alternations), all_gather
/// 8-27 % less and reduce_scatter of 512 MiB-1 GiB 4-15 % less (docs/BENCHMARKS.md#defaults);
/// sendrecv runs on NCCL's per-peer channels and is unchanged. Smaller collectives were slower on
/// 8, so tcpxr's tuner keeps per-rank shares under 32 MiB on at most 4 (crate::tuner). NCCL reads
/// it when it sets up a communicator's channels, after its net plugin's init.
///
/// NCCL_P2P_NET_CHUNKSIZE: NCCL cuts a point-to-point transfer into network messages of this
/// size, 128 KiB by default. tcpxr pays per message (a frame, a hand-off to the I/O pool), and at
/// 512 KiB, the value of Google's TCPX recipe, sendrecv moved 12.7-15.1 GB/s at 128 MiB-1 GiB
/// on two H200s against 4.5-5.0 at 128 KiB in the same run (docs/BENCHMARKS.md#defaults).
///
/// NCCL_ALLOC_P2P_NET_LL_BUFFERS and NCCL_P2P_LL_THRESHOLD (`p2p_ll`: host buffers over the
/// socket transport, where they were measured; NCCL's device unpack cannot take LL receives,
/// [`DEVICE_UNPACK_NEEDS`]): NCCL gives its point-to-point net connections no LL buffer by
/// default, so a small send and receive run Simple, whose receiving kernel waits for the proxy's
/// test and then its tail; with LL the kernel reads the flags of lines that tcpxr's read puts in
/// place.
/// Sendrecv of 8 B-8 KiB took 0.55-0.87 of the time without (runs 449-451, one H200, 2 and 4
/// ranks). LL doubles the bytes, and at 32 KiB it took 1.5x as long: NCCL runs LL up to the
/// threshold times the op's channels, so the threshold is halved to 8 KiB, keeping 32 KiB on
/// Simple (16 KiB measured the same either way). Cost: an LL buffer of 512 KiB of host memory at
/// each end of each point-to-point connection, that is 2 MiB a rank for each peer it sends to and
/// receives from over NCCL's 2 channels a peer (NCCL's documentation warns of all-to-all at many
/// ranks). The threshold is NCCL's for every point-to-point transport, NVLink's included; it is
/// set only where LL buffers are on (the user's choice or this one).
pub(crate) fn defaults(tuner_acts: bool, p2p_ll: bool, env: &mut dyn FnMut(&str) -> Option<String>) -> Vec<Setting> {
    let mut set = Vec::new();
    if tuner_acts && CHANNEL_BOUNDS.iter().all(|k| env(k).is_none()) {
        set.push((
            "NCCL_MIN_NCHANNELS",
            "8",
            "8 channels instead of the 4 NCCL builds for tcpxr, for bulk collectives; tcpxr's tuner keeps smaller ones on 4",
        ));
    }
    if env("NCCL_P2P_NET_CHUNKSIZE").is_none() {
        set.push((
            "NCCL_P2P_NET_CHUNKSIZE",
            "524288",
            "point-to-point messages of 512 KiB instead of NCCL's 128 KiB: tcpxr's costs are per message",
        ));
    }
    if p2p_ll {
        let ll = match env("NCCL_ALLOC_P2P_NET_LL_BUFFERS") {
            Some(v) => v.trim() == "1",
            None => {
                set.push((
                    "NCCL_ALLOC_P2P_NET_LL_BUFFERS",
                    "1",
                    "small point-to-point messages run LL, read by NCCL's kernel as they land, not Simple after \
                     the proxy's test; 2 MiB of host memory a peer a rank",
                ));
                true
            }
        };
        if ll && env("NCCL_P2P_LL_THRESHOLD").is_none() {
            set.push((
                "NCCL_P2P_LL_THRESHOLD",
                "8192",
                "LL up to 8 KiB a channel instead of NCCL's 16 KiB: over the network LL took 1.5x Simple's time at 32 KiB",
            ));
        }
    }
    set
}

/// The speed NCCL is told for an interface that reports none (lo: the socket transport assumes
/// 400 Gb/s, [`crate::transport::DeviceInfo::speed_assumed`]), in Mb/s, with why; None: the
/// transport's figure.
///
/// 10 Gb/s, what NCCL's own Socket reports there, where this process moves host buffers and tcpxr
/// has NCCL build its 8 channels (`NCCL_MIN_NCHANNELS` in `nccl_set`). NCCL 2.28 (tuning.cc) runs
/// the ring's Simple kernel on 256 threads a channel where the ring's bandwidth times its channels
/// is at most 12 GB/s, else on 512. Over pinned host memory, on 256 all_reduce, all_gather and
/// reduce_scatter of 512 KiB-4 MiB took 5-20 % less time and of 32-256 MiB 3-35 % less on 4 ranks
/// one per GPU, NCCL's choices of algorithm and channels unchanged at 1-4 MiB (runs 322-323,
/// docs/BENCHMARKS.md). Not with GPU buffers: NCCL's kernel then places received pages, and the
/// lower speed made all_reduce of 1-256 MiB take 12-31 % longer (run 323). Not where NCCL sizes
/// the channels from the speed (tcpxr's 8 not set): it would build 2, slower at bulk (run 322).
pub(crate) fn assumed_speed(gpu_offered: bool, nccl_set: &[&str]) -> Option<(i32, &'static str)> {
    (!gpu_offered && nccl_set.contains(&"NCCL_MIN_NCHANNELS")).then_some((
        10_000,
        "host buffers with tcpxr's 8 channels: NCCL then runs the ring's Simple kernel on 256 threads a channel, \
         not 512, which moves host-buffer collectives faster (runs 322-323)",
    ))
}

/// Whether the NCCL that called `table` will run tcpxr's tuner, and if not why. NCCL 2.21 and later
/// (net tables v8 and up) look for a tuner in the net plugin's library when NCCL_TUNER_PLUGIN is
/// unset; older ones (v5-v7: 2.12-2.19) only in the library NCCL_TUNER_PLUGIN names. A library
/// named there is taken for tcpxr's when its name says tcpxr; another is the user's own tuner.
/// (NCCL 2.20 takes v8 but loads no tuner from the net plugin: it cannot be told apart.)
pub(crate) fn tuner_reached(
    table: u32,
    env: &mut dyn FnMut(&str) -> Option<String>,
) -> std::result::Result<(), &'static str> {
    match env("NCCL_TUNER_PLUGIN").filter(|v| !v.trim().is_empty()) {
        Some(named) if named.contains("tcpxr") => Ok(()),
        Some(_) => Err("NCCL_TUNER_PLUGIN names another tuner"),
        None if table >= 8 => Ok(()),
        None => Err("this NCCL (net table v5-v7) finds a tuner only through NCCL_TUNER_PLUGIN"),
    }
}

/// The NCCL settings NCCL's device unpack needs, each at one value: (name, value, why). tcpxr
/// sets them when unset; another value turns GPU buffers off (auto) or fails init (1).
const DEVICE_UNPACK_NEEDS: [(&str, &str, &str); 3] = [
    (
        "NCCL_PROTO",
        "Simple",
        "NCCL's device unpack places received GPU pages for its Simple protocol only; LL and LL128 would read \
         them before they are placed",
    ),
    // NCCL 2.24-2.30 never set the communicator's net device type that their own check reads
    // (tuning.cc: "PAT doesn't support net device offload"), so they run PAT over a device-unpack
    // net; all_gather and reduce_scatter then returned wrong data on one rank per node, and
    // correct data with PAT off.
    (
        "NCCL_PAT_ENABLE",
        "0",
        "NCCL's PAT algorithm (all_gather and reduce_scatter with one rank per node) does not place received GPU \
         pages, and NCCL 2.24+ no longer turns it off for a device-unpack net",
    ),
    // NCCL_PROTO does not govern point-to-point LL; with these buffers on, sendrecv and alltoall
    // returned wrong data (run 451; ring.rs says how the slots follow the receives).
    (
        "NCCL_ALLOC_P2P_NET_LL_BUFFERS",
        "0",
        "NCCL's device unpack gives a connection's n-th receive the n-th slot of its ring and its kernel counts \
         Simple receives only, so a point-to-point LL receive would shift the slot of every later one",
    ),
];

/// Whether tcpxr offers NCCL GPU buffers, and how they are placed.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct GpuBuffersChoice {
    pub(crate) offered: bool,
    /// NCCL's own kernel places received GPU pages (v7+): no tcpxr GPU work on its critical path.
    pub(crate) device_unpack: bool,
    /// NCCL settings tcpxr gives a value because the user left them unset: (name, value, why).
    pub(crate) set_env: Vec<Setting>,
    pub(crate) warning: Option<String>,
    /// A setting of NCCL's that would serve this choice better and that only the user can give
    /// (logged at INFO).
    pub(crate) advice: Option<String>,
    /// For the init line: "yes (device unpack)", "no (why)".
    pub(crate) summary: String,
}

/// The GPU-buffer decision (DESIGN.md, "No tcpxr GPU work on NCCL's critical path").
///
/// * v7+ tables: NCCL's device unpack places received pages with NCCL's own kernel, and only its
///   Simple protocol reads them there (LL and LL128 read the receive buffer in place), so tcpxr
///   sets `NCCL_PROTO=Simple` when it is unset, as every TCPX deployment does, and offers no GPU
///   buffers under another NCCL_PROTO; likewise `NCCL_PAT_ENABLE=0` (PAT does not place them
///   either, [`DEVICE_UNPACK_NEEDS`]). Over the socket, a send from GPU memory would need a copy
///   of tcpxr's own on NCCL's critical path, so tcpxr sets `NCCL_NET_GDR_READ=0` (sends from host
///   memory) when it is unset. auto: on over tcpx, off over socket (host buffers measured faster).
/// * v5/v6 tables have no device unpack: tcpxr's own unpack kernel would sit on NCCL's critical
///   path, so GPU buffers are offered only when NCCL_TCPXR_GPU_BUFFERS=1 asks.
pub(crate) fn gpu_buffers(
    config: &Config,
    transport: TransportKind,
    table: u32,
    cuda: bool,
    env: &mut dyn FnMut(&str) -> Option<String>,
) -> Result<GpuBuffersChoice> {
    let setting = config.gpu_buffers;
    let explicit = setting == config::Switch::On;
    let no = |why: String| {
        Ok(GpuBuffersChoice {
            summary: format!("no ({why})"),
            ..Default::default()
        })
    };
    if !setting.on_for(transport, TransportKind::Tcpx) {
        return no(format!("NCCL_TCPXR_GPU_BUFFERS={setting} over {transport}"));
    }
    if !cuda {
        return no("no CUDA driver".into());
    }
    if table < 7 {
        if !explicit {
            return no(format!(
                "NCCL's v{table} table has no device unpack; NCCL_TCPXR_GPU_BUFFERS=1 offers them with tcpxr's own unpack kernel"
            ));
        }
        return Ok(GpuBuffersChoice {
            offered: true,
            warning: Some(format!(
                "NCCL_TCPXR_GPU_BUFFERS=1 under NCCL's v{table} table: received GPU pages are placed by tcpxr's own kernel, \
                 which can deadlock with NCCL's kernel when both share a hardware queue (CUDA_DEVICE_MAX_CONNECTIONS=1, MPS)"
            )),
            summary: "yes (tcpxr's unpack kernel)".into(),
            ..Default::default()
        });
    }
    let mut choice = GpuBuffersChoice {
        offered: true,
        device_unpack: true,
        summary: "yes (NCCL's device unpack)".into(),
        ..Default::default()
    };
    for (name, value, why) in DEVICE_UNPACK_NEEDS {
        match env(name) {
            None => choice.set_env.push((name, value, why)),
            Some(v) if v.trim().eq_ignore_ascii_case(value) => {}
            Some(v) if explicit => {
                return Err(Error::invalid_argument(format!(
                    "NCCL_TCPXR_GPU_BUFFERS=1 with {name}={v}: {why}. Accepted: {name} unset or {value}, or \
                     NCCL_TCPXR_GPU_BUFFERS=0"
                )))
            }
            Some(v) => return no(format!("{name}={v}: {why}")),
        }
    }
    if transport == TransportKind::Socket {
        // Over the socket, received pages wait in pinned host memory and NCCL's unpack reads them
        // across PCIe with the warps of one channel: each channel places about 2.5 GB/s whatever
        // its chunk size, so sendrecv wants more channels per peer than NCCL's 2 (runs 159, 160),
        // unless tcpxr's copies place them (NCCL_TCPXR_GPU_COPY_BYTES: auto copies on the
        // connections NCCL's hints, v11+ tables, name point-to-point; run 238). tcpxr cannot give
        // that value itself: NCCL 2.28+ read NCCL_NCHANNELS_PER_NET_PEER into the communicator's
        // config before any net plugin loads (set at tcpxr's init it changed nothing in run 160),
        // so the user is told where no copies come.
        // Point-to-point connections are known only from NCCL's hints (v11+ tables).
        let rule = crate::settings::gpu_copy(config);
        let copies = rule.general.value > 0 || (table >= 11 && rule.p2p.value > 0);
        if !copies && env("NCCL_NCHANNELS_PER_NET_PEER").is_none() {
            choice.advice = Some(
                "GPU buffers over the socket without tcpxr's copies (NCCL_TCPXR_GPU_COPY_BYTES): NCCL's device unpack \
                 places about 2.5 GB/s of received pages per channel, and NCCL gives a peer 2 channels; \
                 NCCL_NCHANNELS_PER_NET_PEER=8 made sendrecv of 512 MiB 2.5x faster on two H200s (docs/CONFIG.md). \
                 NCCL reads it before tcpxr loads, so set it yourself"
                    .into(),
            );
        }
        match env("NCCL_NET_GDR_READ") {
            None => choice.set_env.push((
                "NCCL_NET_GDR_READ",
                "0",
                "sends from GPU memory would need tcpxr's own copy on NCCL's critical path",
            )),
            Some(v) if v.trim() == "0" => {}
            Some(v) => {
                choice.warning = Some(format!(
                    "NCCL_NET_GDR_READ={v} with GPU buffers over the socket transport: sends from GPU memory are staged by \
                     tcpxr's own copies, which can deadlock with NCCL's kernel when both share a hardware queue \
                     (CUDA_DEVICE_MAX_CONNECTIONS=1, MPS); leave NCCL_NET_GDR_READ unset or 0"
                ))
            }
        }
    }
    Ok(choice)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Switch;

    #[test]
    fn the_tuner_is_reached_from_net_v8_or_through_nccl_tuner_plugin_naming_tcpxr() {
        let reached = |table, vars: &[(&str, &str)]| {
            let vars: Vec<(String, String)> = vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
            tuner_reached(table, &mut |k| {
                vars.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone())
            })
            .is_ok()
        };
        assert!(reached(8, &[]) && reached(12, &[]));
        assert!(!reached(7, &[]) && !reached(5, &[]));
        assert!(reached(7, &[("NCCL_TUNER_PLUGIN", "/opt/lib/libnccl-net-tcpxr.so")]));
        assert!(!reached(11, &[("NCCL_TUNER_PLUGIN", "libnccl-tuner-mine.so")]));
        assert!(!reached(5, &[("NCCL_TUNER_PLUGIN", " ")]));
    }

    fn env_of<'a>(vars: &'a [(&'a str, &'a str)]) -> impl FnMut(&str) -> Option<String> + 'a {
        move |k| vars.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string())
    }

    fn names(set: &[(&'static str, &'static str, &'static str)]) -> Vec<(&'static str, &'static str)> {
        set.iter().map(|(k, v, _)| (*k, *v)).collect()
    }

    #[test]
    fn nccl_settings_are_set_only_when_the_user_left_them_unset() {
        let all = [("NCCL_MIN_NCHANNELS", "8"), ("NCCL_P2P_NET_CHUNKSIZE", "524288")];
        let defaults = |tuner_acts, vars: &[(&str, &str)]| names(&defaults(tuner_acts, false, &mut env_of(vars)));
        assert_eq!(defaults(true, &[]), all);
        assert_eq!(defaults(true, &[("NCCL_P2P_NET_CHUNKSIZE", "131072")]), all[..1]);
        // Any bound on the channels, the user's maximum included, keeps NCCL's channel count,
        // and so does a tuner that does not act on this transport (off, or auto over tcpx).
        for bound in CHANNEL_BOUNDS {
            assert_eq!(defaults(true, &[(bound, "2")]), all[1..], "{bound}");
        }
        assert_eq!(defaults(false, &[]), all[1..]);
    }

    #[test]
    fn point_to_point_ll_is_given_where_asked_with_its_threshold() {
        let ll = |vars: &[(&str, &str)]| {
            let set = names(&defaults(false, true, &mut env_of(vars)));
            set.into_iter().filter(|(k, _)| k.contains("LL")).collect::<Vec<_>>()
        };
        let both = [
            ("NCCL_ALLOC_P2P_NET_LL_BUFFERS", "1"),
            ("NCCL_P2P_LL_THRESHOLD", "8192"),
        ];
        assert_eq!(ll(&[]), both);
        // The user's LL buffers get tcpxr's threshold; the user's threshold or their "no LL" stands.
        assert_eq!(ll(&[("NCCL_ALLOC_P2P_NET_LL_BUFFERS", "1")]), both[1..]);
        assert_eq!(ll(&[("NCCL_P2P_LL_THRESHOLD", "16384")]), both[..1]);
        assert_eq!(ll(&[("NCCL_ALLOC_P2P_NET_LL_BUFFERS", "0")]), []);
        // Over TCPX, or with GPU buffers, neither is given.
        let other = defaults(false, false, &mut env_of(&[]));
        assert!(other.iter().all(|(k, _, _)| !k.contains("LL")));
    }

    #[test]
    fn an_assumed_speed_is_lowered_only_for_host_buffers_on_tcpxrs_channels() {
        let eight = ["NCCL_MIN_NCHANNELS", "NCCL_P2P_NET_CHUNKSIZE"];
        assert_eq!(assumed_speed(false, &eight).map(|(mbps, _)| mbps), Some(10_000));
        // GPU buffers: NCCL's kernel places received pages, on 512 threads.
        assert_eq!(assumed_speed(true, &eight), None);
        // NCCL sizes the channels itself (the user's bound, or no tuner): the speed keeps its 4.
        assert_eq!(assumed_speed(false, &eight[1..]), None);
    }

    #[test]
    fn gpu_buffers_follow_the_table_the_transport_and_nccl_proto() {
        let config = |g| Config {
            gpu_buffers: g,
            ..Config::default()
        };
        let (auto, on) = (config(Switch::Auto), config(Switch::On));
        let choose = |c: &Config, transport, table, vars: &[(&str, &str)]| {
            gpu_buffers(c, transport, table, true, &mut env_of(vars))
        };
        // auto: over tcpx with device unpack and Simple; over socket none.
        let tcpx = choose(&auto, TransportKind::Tcpx, 12, &[]).unwrap();
        assert!(tcpx.offered && tcpx.device_unpack && tcpx.warning.is_none());
        assert_eq!(
            names(&tcpx.set_env),
            [
                ("NCCL_PROTO", "Simple"),
                ("NCCL_PAT_ENABLE", "0"),
                ("NCCL_ALLOC_P2P_NET_LL_BUFFERS", "0")
            ]
        );
        assert!(!choose(&auto, TransportKind::Socket, 12, &[]).unwrap().offered);
        // Asked for over socket: sends from host memory too.
        let socket = choose(
            &on,
            TransportKind::Socket,
            9,
            &[("NCCL_PROTO", "simple"), ("NCCL_PAT_ENABLE", "0")],
        )
        .unwrap();
        assert!(socket.offered && socket.device_unpack);
        assert_eq!(
            names(&socket.set_env),
            [("NCCL_ALLOC_P2P_NET_LL_BUFFERS", "0"), ("NCCL_NET_GDR_READ", "0")]
        );
        assert!(socket.advice.unwrap().contains("NCCL_NCHANNELS_PER_NET_PEER=8"));
        // From the v11 table NCCL's hints let auto copy on point-to-point connections: no advice;
        // with copies off there is again.
        let v12 = |c: &Config| {
            choose(
                c,
                TransportKind::Socket,
                12,
                &[("NCCL_PROTO", "simple"), ("NCCL_PAT_ENABLE", "0")],
            )
            .unwrap()
        };
        assert!(
            v12(&on).advice.is_none(),
            "auto copies where NCCL's 2 channels a peer limit"
        );
        let no_copies = Config {
            gpu_copy_bytes: Some(0),
            ..on.clone()
        };
        assert!(v12(&no_copies)
            .advice
            .unwrap()
            .contains("NCCL_NCHANNELS_PER_NET_PEER=8"));
        let channels = choose(&on, TransportKind::Socket, 9, &[("NCCL_NCHANNELS_PER_NET_PEER", "4")]).unwrap();
        assert!(channels.advice.is_none(), "the user's own value stands");
        assert!(tcpx.advice.is_none());
        let gdr_read = choose(&on, TransportKind::Socket, 9, &[("NCCL_NET_GDR_READ", "1")]).unwrap();
        assert!(gdr_read.warning.unwrap().contains("NCCL_NET_GDR_READ=1"));
        // Another protocol: auto gives GPU buffers up, =1 fails init naming both variables.
        assert!(
            !choose(&auto, TransportKind::Tcpx, 12, &[("NCCL_PROTO", "LL128")])
                .unwrap()
                .offered
        );
        let err = choose(&on, TransportKind::Tcpx, 12, &[("NCCL_PROTO", "LL128")]).unwrap_err();
        assert!(err.msg.contains("NCCL_TCPXR_GPU_BUFFERS=1") && err.msg.contains("NCCL_PROTO=LL128"));
        // LL buffers on point-to-point connections (the user's 1): the same, since the ring's
        // slots would no longer follow NCCL's kernel (run 451: wrong data).
        let ll = [("NCCL_ALLOC_P2P_NET_LL_BUFFERS", "1")];
        assert!(!choose(&auto, TransportKind::Tcpx, 12, &ll).unwrap().offered);
        let err = choose(&on, TransportKind::Socket, 12, &ll).unwrap_err();
        assert!(err.msg.contains("NCCL_ALLOC_P2P_NET_LL_BUFFERS=1") && err.msg.contains("unset or 0"));
        // PAT allowed (1, or NCCL's own 2): the same.
        for pat in ["1", "2"] {
            assert!(
                !choose(&auto, TransportKind::Tcpx, 12, &[("NCCL_PAT_ENABLE", pat)])
                    .unwrap()
                    .offered
            );
            let err = choose(&on, TransportKind::Tcpx, 12, &[("NCCL_PAT_ENABLE", pat)]).unwrap_err();
            assert!(err.msg.contains(&format!("NCCL_PAT_ENABLE={pat}")) && err.msg.contains("unset or 0"));
        }
        // v5/v6: only when asked, with tcpxr's own kernel and a WARN.
        assert!(!choose(&auto, TransportKind::Tcpx, 6, &[]).unwrap().offered);
        let v5 = choose(&on, TransportKind::Tcpx, 5, &[]).unwrap();
        assert!(v5.offered && !v5.device_unpack && v5.warning.unwrap().contains("deadlock"));
        // No CUDA driver: none.
        assert!(
            !gpu_buffers(&on, TransportKind::Tcpx, 12, false, &mut env_of(&[]))
                .unwrap()
                .offered
        );
    }
}
