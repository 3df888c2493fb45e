//! The settings table's rows: every `NCCL_TCPXR_*` variable's name, default, accepted values (in
//! words, and as the range the parser checks for a number) and meaning ([`PARAMS`]), the one
//! source the parser, the log and the documents read.

/// One row of the settings table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Param {
    /// Full environment variable name.
    pub name: &'static str,
    /// Value used when the variable is unset or empty ("" = unset).
    pub default: &'static str,
    /// Human text of what is accepted, quoted in error messages.
    pub accepted: &'static str,
    /// The numbers the parser accepts, for a row that takes a number (its `accepted` text says
    /// the same in words; a test holds the two together); None for names, paths and words.
    pub range: Option<Range>,
    /// What the setting does.
    pub doc: &'static str,
}

/// The accepted set of an integer setting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Range {
    pub lo: u64,
    pub hi: u64,
    /// 0 is accepted besides `lo..=hi` (it means "automatic" or "off").
    pub zero: bool,
    /// The value must be a multiple of this.
    pub multiple: u64,
    /// K/M/G suffixes are accepted.
    pub bytes: bool,
}

/// `lo..=hi`, plain numbers.
pub const fn range(lo: u64, hi: u64) -> Range {
    Range {
        lo,
        hi,
        zero: false,
        multiple: 1,
        bytes: false,
    }
}

/// `lo..=hi` bytes, with K/M/G suffixes.
pub const fn byte_range(lo: u64, hi: u64) -> Range {
    Range {
        bytes: true,
        ..range(lo, hi)
    }
}

/// Socket buffer sizes: 0 (the kernel's autotuning) or 4 KiB-1 GiB.
const SOCKET_BUFFER: Range = Range {
    zero: true,
    ..byte_range(4096, 1 << 30)
};
/// The stripes' window: 0 (none) or 16 KiB-1 GiB.
const UNREAD_WINDOW: Range = Range {
    zero: true,
    ..byte_range(16 << 10, 1 << 30)
};

/// Chunk sizes: whole pages of 4 KiB-16 MiB.
const CHUNK: Range = Range {
    multiple: 4096,
    ..byte_range(4096, 16 << 20)
};
/// The pieces a message is cut into below the chunk: 0 (off) or a chunk size.
const PIECE: Range = Range { zero: true, ..CHUNK };

pub const STRIPES: Param = Param {
    name: "NCCL_TCPXR_STRIPES",
    default: "4",
    accepted: "1-16",
    range: Some(range(1, 16)),
    doc: "Inner connections (stripes) per NCCL connection; chunks are dealt round-robin over them. \
          The listening side's value is used, so both ends always agree. Also the RMA tables' \
          connections per pair of ranks (context c on connection c mod this).",
};
pub const CHUNK_BYTES: Param = Param {
    name: "NCCL_TCPXR_CHUNK_BYTES",
    default: "524288",
    accepted: "4096-16777216, a multiple of 4096 (K/M suffixes allowed)",
    range: Some(CHUNK),
    doc: "Size of the chunks a message is cut into before it is dealt over the stripes. The \
          listening side's value is used; over tcpx chunks are capped at 4 MiB, and, unless \
          NCCL_TCPXR_GPU_BUFFERS=0, raised with a WARN to at least 4 MiB / (NCCL_TCPXR_STRIPES x \
          NCCL_TCPXR_RECV_WINDOW): with NCCL's \
          device unpack a receive holds its chunks until NCCL consumes it, so one stripe's chunks \
          of a receive (up to 4 MiB) must fit in its receive window at once.",
};
pub const IFNAME: Param = Param {
    name: "NCCL_TCPXR_IFNAME",
    default: "",
    accepted: "comma-separated interface name prefixes; a leading ^ excludes, a leading = matches \
               exactly (like NCCL_SOCKET_IFNAME)",
    range: None,
    doc: "Network interfaces tcpxr may use. Unset: NCCL_SOCKET_IFNAME, else the first interface \
          that is up and not loopback, else lo.",
};
pub const SEND_WINDOW: Param = Param {
    name: "NCCL_TCPXR_SEND_WINDOW",
    default: "12",
    accepted: "1-64",
    range: Some(range(1, 64)),
    doc: "Chunks in flight per stripe on the sending side.",
};
pub const RECV_WINDOW: Param = Param {
    name: "NCCL_TCPXR_RECV_WINDOW",
    default: "16",
    accepted: "1-64",
    range: Some(range(1, 64)),
    doc: "Chunks in flight per stripe on the receiving side.",
};
/// Largest inline payload: the upper bound of NCCL_TCPXR_INLINE_BYTES and of the two idle limits,
/// and the most a peer's handle may announce (`engine::wire` refuses more).
pub const MAX_INLINE_BYTES: u32 = 1 << 20;
pub const INLINE_BYTES: Param = Param {
    name: "NCCL_TCPXR_INLINE_BYTES",
    default: "16384",
    accepted: "0-1048576 (K/M suffixes allowed)",
    range: Some(byte_range(0, MAX_INLINE_BYTES as u64)),
    doc: "Messages up to this size travel on the control connection and use no stripe. They cost \
          one socket write and no hand-off, which is what the smallest messages wait on.",
};
pub const INLINE_IDLE_BYTES: Param = Param {
    name: "NCCL_TCPXR_INLINE_IDLE_BYTES",
    default: "auto",
    accepted: "auto or 0-1048576 (K/M suffixes allowed)",
    range: Some(byte_range(0, MAX_INLINE_BYTES as u64)),
    doc: "Messages up to this size also travel on the control connection while the connection is \
          nearly idle. Nearly idle: at most one other message is in flight on the connection, and \
          no other such message of NCCL's thread is inline on any connection; latency-bound \
          traffic is then one socket write from NCCL's thread, while bulk traffic (more in flight) \
          and a second mid-sized message, which the I/O pool copies in parallel, stay striped. A \
          receiver that offers GPU buffers accepts only NCCL_TCPXR_INLINE_BYTES. auto: 32768 where \
          the stripes move in parallel (at least 2 I/O threads on 4 cores of the process's own share \
          of the host), else 524288; decided at the first connection and logged then \
          (docs/BENCHMARKS.md, \"Defaults\").",
};
pub const INLINE_IDLE_P2P_BYTES: Param = Param {
    name: "NCCL_TCPXR_INLINE_IDLE_P2P_BYTES",
    default: "auto",
    accepted: "auto or 0-1048576 (K/M suffixes allowed)",
    range: Some(byte_range(0, MAX_INLINE_BYTES as u64)),
    doc: "NCCL_TCPXR_INLINE_IDLE_BYTES for the connections NCCL opens for point-to-point operations. \
          NCCL names them (send/recv, all-to-all) in the hints it gives before connecting (setNetAttr, \
          NCCL 2.28+); other connections, and every connection under older NCCL, take \
          NCCL_TCPXR_INLINE_IDLE_BYTES. A point-to-point message is a whole transfer that NCCL waits \
          for, not one step of a pipeline. On these connections NCCL's thread sends such a message \
          inline only alone: once two of its messages were out at once (a sendrecv spread over two \
          channels), they go to the stripes until one travels alone again. auto: the larger of \
          131072 and NCCL_TCPXR_INLINE_IDLE_BYTES.",
};
pub const IDLE_CHUNK_BYTES: Param = Param {
    name: "NCCL_TCPXR_IDLE_CHUNK_BYTES",
    default: "auto",
    accepted: "auto, 0 or 4096-16777216, a multiple of 4096 (K/M suffixes allowed)",
    range: Some(PIECE),
    doc: "Smallest piece of a host message sent on a nearly idle connection (0: off). \
          Nearly idle: the test of NCCL_TCPXR_INLINE_IDLE_BYTES (at most one other message in \
          flight). Such a message is latency-bound: it is cut into one piece per stripe, none smaller \
          than this, so that its pieces go out over the stripes at once, each moved by its own I/O \
          thread, instead of whole on one; where that is not finer than NCCL_TCPXR_CHUNK_BYTES, and \
          on a streaming connection, the message keeps that chunk size. The sender's value is used \
          (each message's header names its chunk size). A value set applies to every connection. \
          auto: 65536 on connections NCCL names point-to-point (see \
          NCCL_TCPXR_INLINE_IDLE_P2P_BYTES) where the stripes move in parallel (see \
          NCCL_TCPXR_INLINE_IDLE_BYTES), else 0; 0 over tcpx.",
};
pub const SPREAD_PIECE_BYTES: Param = Param {
    name: "NCCL_TCPXR_SPREAD_PIECE_BYTES",
    default: "auto",
    accepted: "auto, 0 or 4096-16777216, a multiple of 4096 (K/M suffixes allowed)",
    range: Some(PIECE),
    doc: "Smallest piece of a host message below NCCL_TCPXR_CHUNK_BYTES spread over the stripes \
          while few connections of the process move data (0: off). NCCL's ring keeps about one \
          message at a time on each connection, each moved by one I/O thread at either end; with \
          M distinct send connections among the process's last 16 striped messages and T threads \
          in the I/O pool, a message is cut into T / (2 M) pieces (at most one per stripe, none \
          smaller than this), so that idle threads move it in parallel. Connections \
          NCCL_TCPXR_IDLE_CHUNK_BYTES covers (point-to-point ones by default, every one where it \
          is set) keep its rule. The sender's value is used (each message's header names its \
          chunk size). auto: 65536 where the stripes move in parallel (see \
          NCCL_TCPXR_INLINE_IDLE_BYTES), else 0; 0 over tcpx.",
};
pub const SOCKET_SNDBUF: Param = Param {
    name: "NCCL_TCPXR_SOCKET_SNDBUF",
    default: "0",
    accepted: "0 (kernel autotuning) or 4096-1073741824 (K/M/G suffixes allowed)",
    range: Some(SOCKET_BUFFER),
    doc: "SO_SNDBUF of the data sockets; 0 leaves the kernel's autotuning on. Below 65536 it is \
          honoured with a WARN: such a buffer caps each stripe far below line rate. A ping-pong of \
          single 128-192 KiB messages can wait out the kernel's loss-probe timer (a 2.6 ms p99) under \
          autotuning, and not with this and NCCL_TCPXR_SOCKET_RCVBUF at 4194304; NCCL's own traffic \
          did not show it.",
};
pub const SOCKET_RCVBUF: Param = Param {
    name: "NCCL_TCPXR_SOCKET_RCVBUF",
    default: "0",
    accepted: "0 (kernel autotuning) or 4096-1073741824 (K/M/G suffixes allowed)",
    range: Some(SOCKET_BUFFER),
    doc: "SO_RCVBUF of the data sockets; 0 leaves the kernel's autotuning on. Below 65536 it is \
          honoured with a WARN: such a buffer caps each stripe far below line rate. Receiving \
          stripes take at least twice NCCL_TCPXR_UNREAD_BYTES.",
};
pub const UNREAD_BYTES: Param = Param {
    name: "NCCL_TCPXR_UNREAD_BYTES",
    default: "0",
    accepted: "0 (no limit) or 16384-1073741824 (K/M/G suffixes allowed)",
    range: Some(UNREAD_WINDOW),
    doc: "Bytes a socket stripe's sender may send beyond what the receiver has read. The \
          receiver grants more as it reads and the rest waits in the sender's memory, so the \
          receiving copy finds its bytes in the cache while TCP keeps its own large window. The \
          receiving side's value is used, and its stripes take an SO_RCVBUF of at least twice this \
          (see NCCL_TCPXR_SOCKET_RCVBUF); where net.core.rmem_max keeps them smaller, the window is \
          cut to a quarter of the buffer the kernel kept, with a WARN. 0: no limit but TCP's. Off by default: 262144 made the \
          4-rank ring 1.4x faster and bulk all_gather up to 22 % at 4 ranks, but sendrecv up to 28 % \
          slower, and 2-rank all_reduce and reduce_scatter up to 15 % (docs/BENCHMARKS.md, \
          \"The stripes' window\"). A frozen peer is then waited for instead of declared dead (see \
          NCCL_TCPXR_PEER_TIMEOUT_MS).",
};

pub const UNREAD_MAX_BYTES: Param = Param {
    name: "NCCL_TCPXR_UNREAD_MAX_BYTES",
    default: "0",
    accepted: "0 (no growth) or 16384-1073741824, not below a set NCCL_TCPXR_UNREAD_BYTES (K/M/G \
               suffixes allowed)",
    range: Some(UNREAD_WINDOW),
    doc: "Largest a socket stripe's window (NCCL_TCPXR_UNREAD_BYTES) may grow to. The receiver \
          doubles a stripe's window when its sender stopped at the grant while the receiver was \
          waiting for bytes, and halves it back after 8 windows read without that \
          (transport/socket/grant.rs). 0: the window keeps its size. The receiving side's value is \
          used; its stripes take an SO_RCVBUF of at least twice this (cut as \
          NCCL_TCPXR_UNREAD_BYTES is where the kernel keeps less). At 4 ranks, 262144 growing \
          to 4194304 kept sendrecv at its speed without a window (a fixed 262144: up to 24 % \
          slower) and took bulk all_reduce 7-14 % less time; at 2 ranks it cost sendrecv and \
          reduce_scatter up to 22 % on one instance and nothing beyond the spread on another \
          (docs/BENCHMARKS.md, \"A window that grows\").",
};

/// Socket buffer sizes below this are honoured but warned about (see [`Config::warnings`](super::Config::warnings)).
pub const PLAUSIBLE_SOCKET_BUFFER: usize = 64 << 10;
pub const IO_THREADS: Param = Param {
    name: "NCCL_TCPXR_IO_THREADS",
    default: "auto",
    accepted: "auto or 0-1024 (never more than the cores)",
    range: Some(range(0, 1024)),
    doc: "Threads of the socket transport's I/O pool, one pool per process shared by every \
          connection. NCCL's proxy thread moves the bytes a socket takes or has at once; a stripe \
          with a backlog (see NCCL_TCPXR_HANDOFF_BYTES) goes to one of these threads until it \
          has caught up. 0: no pool, the proxy thread moves every byte. auto: the cores, at most 10; \
          tcpxr processes sharing the host's cores (several ranks per host, each naming itself with \
          an abstract Unix socket) split them, each leaving 2 for NCCL's own threads and keeping \
          at least 1 (two ranks on 16 cores: 6 each); a process held to part of the host by CPU \
          affinity or a cgroup quota takes that part. More than the cores is capped; the count is \
          fixed and logged at the first connection.",
};
pub const HANDOFF_BYTES: Param = Param {
    name: "NCCL_TCPXR_HANDOFF_BYTES",
    default: "auto",
    accepted: "auto or 0-1073741824 (K/M/G suffixes allowed)",
    range: Some(byte_range(0, 1 << 30)),
    doc: "The most NCCL's proxy thread moves for one socket stripe per turn before the stripe goes \
          to an I/O thread. A chunk larger than this goes to an I/O thread whole, and a stripe left \
          with at least this many bytes to move (not yet taken by the socket, or the rest of a \
          receive that has started to arrive) goes to one too; smaller chunks and backlogs the \
          proxy thread moves as the socket allows. 0: every striped chunk goes to an I/O thread, and \
          NCCL's thread moves only the control connection's messages. auto: 0 where the \
          stripes move in parallel (at least 2 I/O threads on 4 cores of the process's own share of \
          the host: two ranks on 16 cores, or four), else 524288, where NCCL's thread doing the \
          work itself measured faster (2 cores; eight ranks on 16 cores, one I/O thread each); \
          decided at the first connection and logged then.",
};
pub const IO_SPIN_US: Param = Param {
    name: "NCCL_TCPXR_IO_SPIN_US",
    default: "auto",
    accepted: "auto or 0-100000",
    range: Some(range(0, 100_000)),
    doc: "Microseconds an idle I/O thread keeps looking for work before it sleeps. Up to \
          NCCL_TCPXR_IO_SPIN_THREADS threads of the pool do (watching the queue a hand-off leaves \
          a stripe in while one spins, and now and then the pool's epoll set), so that a stripe \
          handed off while traffic flows is taken without a wake-up; none spin once traffic has \
          stopped that long. 0: idle threads sleep at once. auto: 200 where the stripes move \
          in parallel (see NCCL_TCPXR_HANDOFF_BYTES), else 0.",
};
pub const IO_SPIN_THREADS: Param = Param {
    name: "NCCL_TCPXR_IO_SPIN_THREADS",
    default: "auto",
    accepted: "auto or 1-64",
    range: Some(range(1, 64)),
    doc: "How many idle I/O threads may spin at once (see NCCL_TCPXR_IO_SPIN_US). That is the number \
          of cores the pool may keep busy waiting while traffic flows; never more than the I/O \
          threads. auto: 4 where the process's \
          own cores hold its I/O threads, NCCL's 2 and 4 more (four ranks on 64 cores: 10 threads \
          on 16), so that a hand-off finds a spinner while the four flows of a rank's two ring \
          channels keep others busy; else 1, as spinners would take cores from the copying.",
};
pub const SPEED_MBPS: Param = Param {
    name: "NCCL_TCPXR_SPEED_MBPS",
    default: "0",
    accepted: "0 (the interface's speed from sysfs) or 1-10000000",
    range: Some(Range {
        zero: true,
        ..range(1, 10_000_000)
    }),
    doc: "Port speed reported to NCCL in Mbit/s; it steers NCCL's choice of channel count and its \
          ring kernel's threads. 0: the speed sysfs gives the interface; the loopback, which has none \
          there, reports 400000, or 10000 where the process moves host buffers on tcpxr's 8 channels \
          (NCCL then runs its ring's Simple kernel on 256 threads a channel, faster over host memory).",
};
pub const HANDSHAKE_TIMEOUT_MS: Param = Param {
    name: "NCCL_TCPXR_HANDSHAKE_TIMEOUT_MS",
    default: "10000",
    accepted: "100-600000",
    range: Some(range(100, 600_000)),
    doc: "How long a handshake may take: a listen port drops a connection without a complete \
          hello by then. A connect not complete by then fails, and so does an accept whose peer's \
          stripes have not all come this long after accept first looked for them.",
};
pub const PEER_TIMEOUT_MS: Param = Param {
    name: "NCCL_TCPXR_PEER_TIMEOUT_MS",
    default: "5000",
    accepted: "500-600000",
    range: Some(range(500, 600_000)),
    doc: "TCP_USER_TIMEOUT and keepalive budget after which a silent peer is ncclRemoteError. A \
          peer that dies closes its sockets and is an error at once; one whose host stops \
          answering is one after about this long. Linux applies TCP_USER_TIMEOUT to a zero window \
          too: a peer process that is frozen (SIGSTOP, stopped in a debugger) while data waits for \
          it is declared dead after about this long (5.3 s at the default), where NCCL's Socket \
          transport waits; a rank that is merely late (20-30 s, 2 and 4 ranks under torch) \
          completes. With the stripes' window on (NCCL_TCPXR_UNREAD_BYTES) the unread bytes wait in \
          the sender's memory and a frozen peer is waited for, unless small messages fill the \
          control connection. When debugging, set 600000 (10 minutes).",
};
pub const TRANSPORT: Param = Param {
    name: "NCCL_TCPXR_TRANSPORT",
    default: "auto",
    accepted: "auto, tcpx or socket (any case)",
    range: None,
    doc: "Inner transport: tcpx (Google's GPUDirect-TCPX plugin), socket (tcpxr's own TCP) or auto. \
          auto: tcpx if the TCPX library loads and reports a device, else socket; the choice is \
          logged. Over tcpx chunks are capped at 4 MiB and windows at 12 sends and 16 receives per \
          stripe.",
};
pub const TCPX_LIB: Param = Param {
    name: "NCCL_TCPXR_TCPX_LIB",
    default: "",
    accepted: "a path or library name",
    range: None,
    doc: "The GPUDirect-TCPX plugin library to drive. Unset: /var/lib/tcpx/lib64, \
          /usr/local/tcpx/lib64, /usr/local/nvidia/lib64, then the library path, taking only a net \
          named GPUDirectTCPX and never tcpxr itself (docs/TCPX.md). Set: that library must load, \
          or init fails (also with NCCL_TCPXR_TRANSPORT=auto, which falls back to the socket \
          transport only when this is unset).",
};
pub const STATS: Param = Param {
    name: "NCCL_TCPXR_STATS",
    default: "0",
    accepted: "0 or 1",
    range: Some(range(0, 1)),
    doc: "1 logs each connection's counters when it closes. First its totals, window stalls, its \
          messages by size (each counted in the smallest power of two that holds it) and how many \
          others were out when each was posted (the depth of NCCL's pipeline on it), on a send \
          comm the messages NCCL_TCPXR_SPREAD_PIECE_BYTES's rule cut of those it looked at and the \
          moving comms it counted, then a line a stripe: bytes, chunks, I/O busy time, how many chunks were queued ahead of each new \
          one (near 0: the stripe waits for NCCL; near the window: the stripe is the limit), its \
          hand-offs to the I/O pool with their average wait until a worker took them, a sending \
          socket stripe's waits for its receiver's grant (NCCL_TCPXR_UNREAD_BYTES) and their \
          average, how often a receiving stripe's window grew (NCCL_TCPXR_UNREAD_MAX_BYTES), the bytes \
          it demoted from its reader's caches (NCCL_TCPXR_BOUNCE_DEMOTE), a \
          chunk's average time from its post until its last byte moved and from then until NCCL's \
          thread saw it done; on a receive comm under NCCL's device unpack, its copies into GPU \
          memory (NCCL_TCPXR_GPU_COPY_BYTES): how many, their bytes, the time to queue one and \
          from queued to seen done. Also each RMA group's when NCCL \
          closes it: operations and bytes each way, a request's time in tcpxr and then until NCCL's \
          test saw it, the gaps between NCCL's calls while work was outstanding, and for GPU \
          windows the staging copies' time and waits for a staging buffer. And the socket \
          transport's I/O pool's when it stops: how its workers' turns reached them (from the \
          hand-off queue, found spinning, or after a wake-up), its hand-offs, and its threads' \
          time spinning. The timing reads the clock twice per socket call and hand-off: at 4 \
          ranks one per GPU, bulk all_gather and all_reduce ran within the spread with and \
          without it (docs/BENCHMARKS.md, run 255).",
};
pub const STALL_SECONDS: Param = Param {
    name: "NCCL_TCPXR_STALL_SECONDS",
    default: "60",
    accepted: "0 (off) or 1-86400",
    range: Some(Range {
        zero: true,
        ..range(1, 86400)
    }),
    doc: "A connection with requests outstanding that makes no progress for this long logs a WARN \
          saying what it waits for. The WARN names the peer, the requests and their ages, control \
          bytes, bytes per stripe and GPU work or receives NCCL has not consumed; it repeats every \
          interval while the stall lasts, and a line follows when the connection moves again.",
};
pub const GPU_BUFFERS: Param = Param {
    name: "NCCL_TCPXR_GPU_BUFFERS",
    default: "auto",
    accepted: "auto, 0 or 1",
    range: None,
    doc: "Offer NCCL GPU buffers (NCCL_PTR_CUDA) when a CUDA driver is present; auto: over tcpx only \
          (host buffers measured faster over socket). Under NCCL's v7+ tables (NCCL 2.19+) received \
          GPU pages are placed by NCCL's own kernel (device unpack, as with Google's TCPX plugin): \
          tcpxr then sets NCCL_PROTO=Simple if unset (only that protocol reads the unpack ring), \
          NCCL_PAT_ENABLE=0 if unset (NCCL's PAT algorithm does not place the pages, and NCCL 2.24+ \
          no longer turns it off for such a net itself), and, over socket, NCCL_NET_GDR_READ=0 if \
          unset (sends from host memory); another value of NCCL_PROTO or NCCL_PAT_ENABLE turns \
          auto off and makes 1 fail init. Under the v5/v6 tables only 1 offers them, with tcpxr's \
          own unpack kernel, which can deadlock beside a kernel waiting for the same data on a \
          shared hardware queue (CUDA_DEVICE_MAX_CONNECTIONS=1, MPS).",
};
pub const GPU_COPY_BYTES: Param = Param {
    name: "NCCL_TCPXR_GPU_COPY_BYTES",
    default: "auto",
    accepted: "auto or 0-4194304 (K/M suffixes allowed)",
    range: Some(byte_range(0, 4 << 20)),
    doc: "GPU buffers over socket: receives of at least this size are put in place by the GPU's copy \
          engine, not NCCL's unpack kernel (0: never). Over socket, with NCCL's device unpack, a \
          receive into GPU memory lands in pinned host memory; NCCL's kernel reading it across PCIe \
          places about 2.5 GB/s a channel, while the copy engine copies it into NCCL's buffer before \
          test reports it done. A copy's fixed cost, about 8 us, is more than the kernel's read of a \
          few pages, and it needs no multiprocessor, so it completes beside NCCL's waiting kernel \
          with one hardware queue and under MPS. A value set applies to every connection. auto: \
          65536 on connections NCCL names point-to-point (see NCCL_TCPXR_INLINE_IDLE_P2P_BYTES), \
          whose 2 channels a peer the kernel holds to about 5 GB/s, else 0: a collective's 8 \
          channels unpack as fast as host buffers move, and copies made its all_reduce slower \
          (docs/BENCHMARKS.md, \"GPU buffers\").",
};
pub const BOUNCE_DEMOTE: Param = Param {
    name: "NCCL_TCPXR_BOUNCE_DEMOTE",
    default: "1",
    accepted: "0 or 1",
    range: Some(range(0, 1)),
    doc: "GPU buffers over socket: received bytes the copy engine places leave the reading core's \
          caches as they land. With 1, the I/O thread that reads a receive into pinned bounce \
          memory which the copy engine may copy into the GPU (NCCL_TCPXR_GPU_COPY_BYTES: \
          point-to-point connections by default) moves the lines it wrote from its core's \
          private caches to the shared L3 (x86 cldemote; nothing on a CPU without it), so the \
          copy reads them without a snoop into that core. Measured: each copy waits half as \
          long and sendrecv takes 8-20 % less time at 8-16 MiB at 2 ranks, the collectives' \
          time unchanged. Receives a kernel reads (NCCL's unpack, tcpxr's own) are never \
          demoted: it made all_reduce, all_gather and reduce_scatter 4-26 % slower \
          (docs/BENCHMARKS.md, GPU buffers). Host buffers are never demoted: NCCL reads them \
          later, from the cache. 0: no receive is demoted.",
};
pub const TUNER: Param = Param {
    name: "NCCL_TCPXR_TUNER",
    default: "auto",
    accepted: "auto, 0 or 1",
    range: None,
    doc: "The NCCL tuner exported from tcpxr's library, used by NCCL 2.21+ when NCCL_TUNER_PLUGIN is \
          unset (2.19-2.20: when it names this library). For collectives on two or more nodes it applies the rules of docs/CONFIG.md's \
          \"The tuner's rules\" (generated from src/tuner/rules.rs's RULES), by per-rank share (the bytes \
          over the ranks) or size: the mid band in the ring's Simple protocol on 1-2 channels, a small \
          all_reduce on 3-4 ranks in the ring's LL where NCCL would run the tree's, and at most the 4 \
          channels NCCL builds for tcpxr's device below bulk (tcpxr has it build 8, which \
          pay only at bulk, or from shares of 4 MiB with GPU buffers over the socket, whose collective \
          receives NCCL's kernel reads from host memory a channel at a time), and with host buffers over the socket transport every collective on at \
          most 2 channels in a process whose I/O pool has 2 threads (logged once the pool is \
          fixed); every other choice is NCCL's. It acts only in a process whose \
          communicators NCCL runs over tcpxr, and leaves the channel count to NCCL when the user \
          bounds it (NCCL_MIN_NCHANNELS, NCCL_MAX_NCHANNELS, NCCL_MIN_CTAS, NCCL_MAX_CTAS, or the \
          older _NRINGS variables). auto: over the socket transport only (over tcpx unmeasured); 1: \
          over every transport; 0: NCCL's own choices. Where it does not act, tcpxr sets no \
          NCCL_MIN_NCHANNELS either. Each communicator's decision is logged at INFO.",
};

pub const LOOPBACK_DEVICES: Param = Param {
    name: "NCCL_TCPXR_LOOPBACK_DEVICES",
    default: "1",
    accepted: "1-8",
    range: Some(range(1, 8)),
    doc: "Devices the IPv4 loopback interface stands for (socket transport): lo at 127.0.0.1, then \
          lo.2 at 127.0.0.2 and so on (Linux routes all of 127.0.0.0/8 to lo). Above 1, striping \
          over several devices and NCCL's fused NICs (NCCL_NET_FORCE_MERGE=lo,lo.2) can be tried \
          on one host without an address set up by root.",
};
pub const RAILS: Param = Param {
    name: "NCCL_TCPXR_RAILS",
    default: "",
    accepted: "one rail[:plane] per device, in device order, comma-separated; each 0-32767",
    range: None,
    doc: "The rail (and plane) of each device, given to NCCL 2.30+ in the v12 properties. NCCL keeps \
          a ring or tree on one rail and never crosses planes. A fused device has its members' rail \
          (plane) when they share it. A count that differs from the devices fails init. Unset: \
          undefined, NCCL's own rules apply.",
};
pub const RMA: Param = Param {
    name: "NCCL_TCPXR_RMA",
    default: "0",
    accepted: "0 or 1",
    range: Some(range(0, 1)),
    doc: "1 offers NCCL 2.30+ tcpxr's RMA tables (ncclRmaPlugin_v14-v17): one-sided puts, signals and \
          gets over TCP. NCCL's device API (GIN, through NCCL's GIN proxy) and its host RMA calls \
          (ncclPutSignal) use it. 0 reports no RMA device, so NCCL takes its next RMA backend. \
          Windows in host and GPU memory; bytes for GPU windows are staged in pinned memory and \
          copied in on a stream of each group's own, which must never wait behind NCCL's kernel: with \
          CUDA_DEVICE_MAX_CONNECTIONS=1 (or outside 2-32) or under CUDA MPS, tcpxr reports no RMA \
          device, with a WARN saying why, and NCCL goes on without it. Off by default until NCCL's \
          GIN and host RMA have run end to end over it: NCCL 2.30 registers every symmetric window \
          of a multi-node communicator with the RMA backend it found (docs/ARCHITECTURE.md, \
          One-sided operations).",
};

/// Every setting, in the order they are parsed, logged and documented.
pub static PARAMS: &[Param] = &[
    STRIPES,
    CHUNK_BYTES,
    IFNAME,
    SEND_WINDOW,
    RECV_WINDOW,
    INLINE_BYTES,
    INLINE_IDLE_BYTES,
    INLINE_IDLE_P2P_BYTES,
    IDLE_CHUNK_BYTES,
    SPREAD_PIECE_BYTES,
    SOCKET_SNDBUF,
    SOCKET_RCVBUF,
    UNREAD_BYTES,
    UNREAD_MAX_BYTES,
    IO_THREADS,
    HANDOFF_BYTES,
    IO_SPIN_US,
    IO_SPIN_THREADS,
    SPEED_MBPS,
    HANDSHAKE_TIMEOUT_MS,
    PEER_TIMEOUT_MS,
    TRANSPORT,
    TCPX_LIB,
    STATS,
    STALL_SECONDS,
    GPU_BUFFERS,
    GPU_COPY_BYTES,
    BOUNCE_DEMOTE,
    TUNER,
    LOOPBACK_DEVICES,
    RAILS,
    RMA,
];

/// The table row of a variable, if it is one of tcpxr's.
pub fn param(name: &str) -> Option<&'static Param> {
    PARAMS.iter().find(|p| p.name == name)
}
