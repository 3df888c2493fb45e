//! Memory NCCL registers on a comm (`regMr`): registered with every stripe's inner connection,
//! so each chunk of a message posted from it goes to its stripe with that stripe's own handle
//! (TCPX binds a registration to one of its comms). The plugin keeps the [`Registration`] in
//! NCCL's memory handle and hands it back with each isend/irecv.
use super::striper::{Lane, Striper};
use crate::error::{Error, Result};
use crate::transport::{InnerMr, MemKind};
use std::sync::Arc;

/// One `regMr`: the range, the comm it was made on, and one inner handle per stripe in order.
#[derive(Debug)]
pub struct Registration {
    pub ptr: usize,
    pub len: usize,
    pub kind: MemKind,
    owner: usize,
    stripes: Vec<InnerMr>,
}

impl Registration {
    /// Whether `ptr .. ptr + len` lies inside this registration.
    pub fn covers(&self, ptr: usize, len: usize) -> bool {
        ptr >= self.ptr && ptr.checked_add(len).is_some_and(|end| end <= self.ptr + self.len)
    }

    /// Stripe `i`'s handle for this memory.
    pub fn stripe(&self, i: usize) -> InnerMr {
        self.stripes.get(i).copied().unwrap_or(InnerMr::NONE)
    }
}

/// The registrations of one comm (`owner` is the comm's address).
pub(crate) struct Registry {
    owner: usize,
    regions: Vec<Arc<Registration>>,
}

impl Registry {
    pub fn new(owner: usize) -> Self {
        Registry {
            owner,
            regions: Vec::new(),
        }
    }

    pub fn add<L: Lane>(
        &mut self,
        striper: &mut Striper<L>,
        ptr: usize,
        len: usize,
        kind: MemKind,
    ) -> Result<Arc<Registration>> {
        let stripes = striper.register(ptr, len, kind)?;
        let reg = Arc::new(Registration {
            ptr,
            len,
            kind,
            owner: self.owner,
            stripes,
        });
        self.regions.push(reg.clone());
        Ok(reg)
    }

    pub fn remove<L: Lane>(&mut self, striper: &mut Striper<L>, reg: &Arc<Registration>) -> Result<()> {
        let Some(i) = self.regions.iter().position(|r| Arc::ptr_eq(r, reg)) else {
            return Err(Error::invalid_argument(
                "deregMr of memory that was not registered on this comm",
            ));
        };
        let reg = self.regions.swap_remove(i);
        striper.deregister(&reg.stripes)
    }

    /// The registration a message at `ptr .. ptr + len` is posted with: `reg` when it was made on
    /// this comm and holds the message, else none (the stripes then register per post).
    pub fn check(&self, reg: Option<Arc<Registration>>, ptr: usize, len: usize) -> Result<Option<Arc<Registration>>> {
        let Some(reg) = reg else { return Ok(None) };
        if reg.owner != self.owner {
            return Err(Error::invalid_usage(
                "a memory handle registered on another comm: NCCL registers memory per comm",
            ));
        }
        Ok(reg.covers(ptr, len).then_some(reg))
    }

    /// Deregisters everything still registered (the comm is closing).
    pub fn clear<L: Lane>(&mut self, striper: &mut Striper<L>) {
        for reg in self.regions.drain(..) {
            if let Err(e) = striper.deregister(&reg.stripes) {
                log::warn!("closing a comm: deregistering {} bytes failed: {}", reg.len, e.msg);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reg(owner: usize) -> Arc<Registration> {
        Arc::new(Registration {
            ptr: 1000,
            len: 100,
            kind: MemKind::Host,
            owner,
            stripes: vec![InnerMr(7), InnerMr(8)],
        })
    }

    #[test]
    fn covers_is_the_whole_range_only() {
        let r = reg(1);
        assert!(r.covers(1000, 100));
        assert!(r.covers(1050, 0));
        assert!(r.covers(1099, 1));
        assert!(!r.covers(999, 10));
        assert!(!r.covers(1050, 51));
        assert!(!r.covers(usize::MAX, 2));
        assert_eq!((r.stripe(1), r.stripe(2)), (InnerMr(8), InnerMr::NONE));
    }

    #[test]
    fn a_registration_is_used_only_on_its_comm_and_for_memory_it_holds() {
        let registry = Registry::new(1);
        assert!(registry.check(Some(reg(1)), 1010, 10).unwrap().is_some());
        assert!(registry.check(Some(reg(1)), 1010, 1000).unwrap().is_none());
        assert!(registry.check(None, 1010, 10).unwrap().is_none());
        assert!(registry.check(Some(reg(2)), 1010, 10).is_err());
    }
}
