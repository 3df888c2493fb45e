//! The two ends of a stripe over TCPX: [`TcpxSend`] and [`TcpxRecv`], one TCPX comm each, holding
//! their requests in FIFO order inside TCPX's 16 slots.
use super::ffi::{self, Comm, Lib, Mr, Posted, Request, UnpackQueue};
use super::memory::{drop_adhoc, handle_for, kind_of, register, Deferred};
use super::unpack::{CpuScatter, Job, Unavailable, Unpack};
use super::{MAX_RECVS, MAX_RECV_BYTES, MAX_SENDS, TCPX_REQUESTS};
use crate::abi::NCCL_NET_DEVICE_UNPACK_MAX_QUEUE_DEPTH;
use crate::error::{Error, Result};
use crate::transport::{DeviceJob, InnerMr, InnerRecv, InnerSend, InnerStripe, MemKind};
use std::collections::VecDeque;
use std::ffi::c_int;
use std::sync::Arc;

/// How a stripe treats a post TCPX refused.
#[derive(Default)]
struct Busy {
    refusals: u64,
}

impl Busy {
    /// Result 3 is what TCPX says when its 16 slots are taken ("unable to allocate requests"): busy,
    /// retry later, never an error for NCCL. It is also what most other TCPX failures return, so
    /// with nothing of ours held (no slot can be taken) it is an error.
    fn judge(&mut self, op: &str, rc: c_int, held: usize) -> Result<bool> {
        if rc != ffi::RC_INTERNAL {
            return Err(ffi::error(op, rc));
        }
        if held == 0 {
            return Err(ffi::error(
                &format!("{op} with no request of this stripe outstanding (so not slot exhaustion)"),
                rc,
            ));
        }
        self.refusals += 1;
        if self.refusals == 1 {
            log::warn!(
                "TCPX refused {op} with result 3 while this stripe held {held} requests; treating it as \
                 'unable to allocate requests' and retrying"
            );
        }
        Ok(false)
    }

    /// A post TCPX did not take (`posted` is not `Yes`): its ad-hoc registration goes, and the
    /// answer is "try again later" for no request, or what [`Busy::judge`] makes of a refusal.
    fn not_taken(
        &mut self,
        lib: &Lib,
        comm: Comm,
        adhoc: Option<Mr>,
        op: &str,
        posted: Posted,
        held: usize,
    ) -> Result<bool> {
        drop_adhoc(lib, comm, adhoc)?;
        match posted {
            Posted::Refused(rc) => self.judge(op, rc, held),
            Posted::Yes(_) | Posted::NoRequest => Ok(false),
        }
    }
}

/// The tag a post carries: the stripe's post count. TCPX ignores tags and matches FIFO; tcpxr
/// relies on nothing but that order. The count only makes TCPX's logs easier to follow.
fn tag(n: u64) -> c_int {
    (n % (c_int::MAX as u64)) as c_int
}

struct SendHeld {
    req: Request,
    /// The memory handle it was posted with (its stripe's registration, or `adhoc`).
    mr: Mr,
    adhoc: Option<Mr>,
}

/// The sending end of a stripe: one TCPX send comm.
pub struct TcpxSend {
    lib: Arc<Lib>,
    comm: Comm,
    held: VecDeque<SendHeld>,
    posted: u64,
    busy: Busy,
    gpu_direct: bool,
    deferred: Deferred,
}

impl TcpxSend {
    pub(super) fn new(lib: Arc<Lib>, comm: Comm, gpu_direct: bool) -> TcpxSend {
        TcpxSend {
            lib,
            comm,
            held: VecDeque::with_capacity(TCPX_REQUESTS),
            posted: 0,
            busy: Busy::default(),
            gpu_direct,
            deferred: Deferred::default(),
        }
    }

    fn in_use(&self) -> Vec<Mr> {
        self.held.iter().map(|h| h.mr).collect()
    }
}

impl InnerStripe for TcpxSend {
    fn gpu_direct(&self) -> bool {
        self.gpu_direct
    }

    /// TCPX's test reports nothing of a peer its helper threads lost.
    fn reports_peer_loss(&self) -> bool {
        false
    }

    fn register(&mut self, ptr: *mut u8, len: usize, kind: MemKind) -> Result<InnerMr> {
        Ok(InnerMr(register(&self.lib, self.comm, ptr, len, kind)?.as_usize()))
    }

    fn deregister(&mut self, mr: InnerMr) -> Result<()> {
        if mr == InnerMr::NONE {
            return Ok(());
        }
        let in_use = self.held.iter().map(|h| h.mr);
        self.deferred
            .deregister(&self.lib, self.comm, Mr::from_usize(mr.0), in_use)
    }
}

impl InnerSend for TcpxSend {
    fn post(&mut self, ptr: *const u8, len: usize, mr: InnerMr) -> Result<bool> {
        if self.held.len() >= MAX_SENDS {
            return Ok(false);
        }
        let (mh, adhoc) = handle_for(&self.lib, self.comm, ptr as *mut u8, len, mr)?;
        match self.lib.isend(self.comm, ptr, len, tag(self.posted), mh) {
            Posted::Yes(req) => {
                self.held.push_back(SendHeld { req, mr: mh, adhoc });
                self.posted += 1;
                Ok(true)
            }
            other => self
                .busy
                .not_taken(&self.lib, self.comm, adhoc, "isend", other, self.held.len()),
        }
    }

    /// A send request frees its TCPX slot when test reports it done.
    fn test_oldest(&mut self) -> Result<bool> {
        let Some(oldest) = self.held.front() else {
            return Err(Error::internal("test on a TCPX stripe with no send outstanding"));
        };
        match self.lib.test(oldest.req) {
            Ok(false) => Ok(false),
            Ok(true) => {
                let done = self.held.pop_front().unwrap();
                drop_adhoc(&self.lib, self.comm, done.adhoc)?;
                if !self.deferred.is_empty() {
                    let in_use = self.in_use();
                    self.deferred.settle_after_completion(&self.lib, self.comm, &in_use);
                }
                Ok(true)
            }
            Err(rc) => Err(ffi::error("test of a send", rc)),
        }
    }
}

impl Drop for TcpxSend {
    /// Closes, then deregisters what requests still in flight used: TCPX's close joins the
    /// helper threads that send from those registrations, and its deregMr never reads the comm.
    fn drop(&mut self) {
        if let Err(e) = self.lib.close_send(self.comm) {
            log::warn!("{}", e.msg);
        }
        for h in std::mem::take(&mut self.held) {
            let _ = drop_adhoc(&self.lib, self.comm, h.adhoc);
        }
        let _ = self.deferred.settle(&self.lib, self.comm, &[]);
    }
}

struct RecvHeld {
    req: Request,
    /// The memory handle it was posted with (its stripe's registration, or `adhoc`).
    mr: Mr,
    dst: usize,
    len: usize,
    kind: MemKind,
    /// Queue slot of its records: the stripe's receive count modulo 16.
    slot: usize,
    adhoc: Option<Mr>,
    /// Tested done and unpacked; waiting for irecvConsumed.
    landed: bool,
}

/// The receiving end of a stripe: one TCPX receive comm, its unpack queue and its unpacker.
pub struct TcpxRecv {
    lib: Arc<Lib>,
    comm: Comm,
    queue: Option<UnpackQueue>,
    unpacker: Box<dyn Unpack>,
    held: VecDeque<RecvHeld>,
    /// Kind of each registration of this stripe, to know where a receive's destination is.
    kinds: Vec<(InnerMr, MemKind)>,
    posted: u64,
    busy: Busy,
    /// GPU receives are posted at their destination and placed by the engine's unpack kernel.
    gpu_direct: bool,
    /// The records of the GPU receive `test_oldest` reported landed last, for `device_job`.
    landed_job: Option<DeviceJob>,
    /// NCCL's device unpack: landed bytes stay in TCPX's pool for NCCL's kernel; nothing is placed
    /// here, and [`InnerRecv::landed`] gives the records of ring slot `landed_slot`.
    keep_records: bool,
    landed_slot: Option<usize>,
    deferred: Deferred,
}

impl TcpxRecv {
    pub(super) fn new(lib: Arc<Lib>, comm: Comm, queue: Option<UnpackQueue>, gpu_direct: bool) -> TcpxRecv {
        let unpacker: Box<dyn Unpack> = match &queue {
            Some(q) if !q.bounce_on_host => Box::new(Unavailable(
                "TCPX's bounce pool is in GPU memory and the tcpx transport does not hand TCPX's records \
                 to the GPU unpack kernel yet; only receives TCPX lands in place (host memory) can complete"
                    .into(),
            )),
            _ => Box::new(CpuScatter),
        };
        TcpxRecv {
            lib,
            comm,
            queue,
            unpacker,
            held: VecDeque::with_capacity(TCPX_REQUESTS),
            kinds: Vec::new(),
            posted: 0,
            busy: Busy::default(),
            gpu_direct,
            landed_job: None,
            keep_records: false,
            landed_slot: None,
            deferred: Deferred::default(),
        }
    }

    fn in_use(&self) -> Vec<Mr> {
        self.held.iter().map(|h| h.mr).collect()
    }

    /// Places a completed receive's bytes from the bounce pool into its destination.
    fn unpack(&mut self, i: usize) -> Result<()> {
        let Some(queue) = &self.queue else {
            return Ok(()); // no unpack device: TCPX received in place
        };
        let r = &self.held[i];
        let records = queue.records(r.slot)?;
        if records.is_empty() {
            // TCPX lands receives into host memory in place and publishes no records.
            if r.kind == MemKind::Host {
                return Ok(());
            }
            return Err(Error::internal(format!(
                "TCPX published no unpack records for a {}-byte receive into GPU memory",
                r.len
            )));
        }
        if r.kind != MemKind::Host {
            // Receives into GPU memory are placed by the engine's unpack kernel (gpu_direct), or
            // the engine lands them in host memory of its own first; the CPU never places them.
            if !self.gpu_direct {
                return Err(Error::internal(
                    "a TCPX receive straight into GPU memory on a stripe whose unpack ring the GPU cannot read",
                ));
            }
            self.landed_job = queue.device_job(r.slot, r.len)?;
            return Ok(());
        }
        let job = Job {
            records,
            bounce: queue.bounce,
            dst: r.dst as *mut u8,
            len: r.len,
        };
        self.unpacker.unpack(&job)
    }
}

impl InnerStripe for TcpxRecv {
    fn gpu_direct(&self) -> bool {
        self.gpu_direct
    }

    /// TCPX's test reports nothing of a peer its helper threads lost.
    fn reports_peer_loss(&self) -> bool {
        false
    }

    fn register(&mut self, ptr: *mut u8, len: usize, kind: MemKind) -> Result<InnerMr> {
        let mr = InnerMr(register(&self.lib, self.comm, ptr, len, kind)?.as_usize());
        self.kinds.push((mr, kind));
        Ok(mr)
    }

    fn deregister(&mut self, mr: InnerMr) -> Result<()> {
        if mr == InnerMr::NONE {
            return Ok(());
        }
        self.kinds.retain(|(m, _)| *m != mr);
        let in_use = self.held.iter().map(|h| h.mr);
        self.deferred
            .deregister(&self.lib, self.comm, Mr::from_usize(mr.0), in_use)
    }
}

impl InnerRecv for TcpxRecv {
    fn device_job(&mut self) -> Result<Option<DeviceJob>> {
        Ok(self.landed_job.take())
    }

    fn keep_records(&mut self) {
        self.keep_records = true;
    }

    fn bounce_base(&self) -> Option<u64> {
        self.queue.as_ref().map(|q| q.bounce as u64)
    }

    fn landed(&self) -> Option<crate::transport::Landed<'_>> {
        let (queue, slot) = (self.queue.as_ref()?, self.landed_slot?);
        let records = queue.records(slot).ok()?;
        (!records.is_empty()).then_some(crate::transport::Landed {
            records,
            bounce: queue.bounce as u64,
        })
    }

    fn post(&mut self, ptr: *mut u8, len: usize, mr: InnerMr) -> Result<bool> {
        if len > MAX_RECV_BYTES {
            return Err(Error::internal(format!(
                "a {len}-byte TCPX receive: tcpxr keeps every receive at or below {MAX_RECV_BYTES} bytes"
            )));
        }
        if self.held.len() >= MAX_RECVS {
            return Ok(false);
        }
        let kind = match self.kinds.iter().find(|(m, _)| *m == mr) {
            Some((_, k)) => *k,
            None => kind_of(ptr),
        };
        let (mh, adhoc) = handle_for(&self.lib, self.comm, ptr, len, mr)?;
        match self.lib.irecv(self.comm, ptr, len, tag(self.posted), mh) {
            Posted::Yes(req) => {
                self.held.push_back(RecvHeld {
                    req,
                    mr: mh,
                    dst: ptr as usize,
                    len,
                    kind,
                    slot: (self.posted % NCCL_NET_DEVICE_UNPACK_MAX_QUEUE_DEPTH as u64) as usize,
                    adhoc,
                    landed: false,
                });
                self.posted += 1;
                Ok(true)
            }
            other => self
                .busy
                .not_taken(&self.lib, self.comm, adhoc, "irecv", other, self.held.len()),
        }
    }

    /// Tests the oldest receive that has not landed; once TCPX says done, its fragments are
    /// unpacked before this returns true.
    fn test_oldest(&mut self) -> Result<bool> {
        let Some(i) = self.held.iter().position(|r| !r.landed) else {
            return Err(Error::internal("test on a TCPX stripe with no receive outstanding"));
        };
        match self.lib.test(self.held[i].req) {
            Ok(false) => Ok(false),
            Ok(true) => {
                if self.keep_records {
                    // NCCL's kernel places the bytes; the records are checked when the engine
                    // copies them into NCCL's ring, and the pages stay until NCCL consumes.
                    self.queue.as_ref().map(|q| q.records(self.held[i].slot)).transpose()?;
                    self.landed_slot = Some(self.held[i].slot);
                } else {
                    self.unpack(i)?;
                }
                self.held[i].landed = true;
                Ok(true)
            }
            Err(rc) => Err(ffi::error("test of a receive", rc)),
        }
    }

    /// irecvConsumed on the oldest landed receive: FIFO, and only after its unpack finished.
    fn consumed(&mut self) -> Result<()> {
        match self.held.front() {
            Some(r) if r.landed => {}
            _ => {
                return Err(Error::internal(
                    "consumed on a TCPX stripe whose oldest receive has not landed",
                ))
            }
        }
        let r = self.held.front().unwrap();
        self.lib.irecv_consumed(self.comm, r.req)?;
        let r = self.held.pop_front().unwrap();
        drop_adhoc(&self.lib, self.comm, r.adhoc)?;
        if !self.deferred.is_empty() {
            let in_use = self.in_use();
            self.deferred.settle_after_completion(&self.lib, self.comm, &in_use);
        }
        Ok(())
    }
}

impl Drop for TcpxRecv {
    /// Closes, then deregisters, as [`TcpxSend`]'s drop.
    fn drop(&mut self) {
        if let Err(e) = self.lib.close_recv(self.comm) {
            log::warn!("{}", e.msg);
        }
        for h in std::mem::take(&mut self.held) {
            let _ = drop_adhoc(&self.lib, self.comm, h.adhoc);
        }
        let _ = self.deferred.settle(&self.lib, self.comm, &[]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_3_is_busy_while_requests_are_held_and_an_error_otherwise() {
        crate::log::install_fallback();
        let mut b = Busy::default();
        assert_eq!(b.judge("isend", 3, 5), Ok(false));
        assert_eq!(b.judge("isend", 3, 16), Ok(false));
        assert_eq!(b.refusals, 2);
        // The first refusal is logged, the second only counted.
        crate::testlog::expect("TCPX refused isend with result 3 while this stripe held 5 requests");
        assert!(crate::testlog::claim_all("TCPX refused isend").is_empty());
        assert!(b.judge("isend", 3, 0).is_err());
        assert_eq!(
            b.judge("irecv", 6, 4).unwrap_err().code,
            crate::abi::ncclResult_t::ncclRemoteError
        );
    }
}
