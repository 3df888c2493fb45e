//! Which of the transport's devices carries each stripe of a connection.
//!
//! A connection on one device puts every stripe there. On a device NCCL fused from several
//! (makeVDevice), stripes are dealt over the members in proportion to their link speed, by
//! smooth weighted round-robin: members interleave (a, b, a, b rather than a, a, b, b), so the
//! round-robin of chunks over stripes spreads bytes over the NICs in the same proportion
//! whatever the message size.
use std::fmt;

/// The transport devices one connection may use, each with its weight (link speed).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Nics(Vec<(usize, u64)>);

impl Nics {
    /// Stripes over `members` (transport device, weight); a weight below 1 counts as 1. At
    /// least one member.
    pub fn weighted(members: impl IntoIterator<Item = (usize, u64)>) -> Nics {
        let members: Vec<(usize, u64)> = members.into_iter().map(|(d, w)| (d, w.max(1))).collect();
        assert!(!members.is_empty(), "a connection needs a device");
        Nics(members)
    }

    /// Where the control connection listens.
    pub fn first(&self) -> usize {
        self.0[0].0
    }

    pub fn members(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().map(|&(d, _)| d)
    }

    /// The device of each of `stripes` stripes.
    pub fn layout(&self, stripes: usize) -> Vec<usize> {
        let total: u64 = self.0.iter().map(|&(_, w)| w).sum();
        let mut credit = vec![0i128; self.0.len()];
        (0..stripes)
            .map(|_| {
                for (c, &(_, w)) in credit.iter_mut().zip(&self.0) {
                    *c += w as i128;
                }
                // Ties go to the first member, so equal weights deal in member order.
                let best = (0..credit.len()).rev().max_by_key(|&i| credit[i]).unwrap();
                credit[best] -= total as i128;
                self.0[best].0
            })
            .collect()
    }
}

impl fmt::Display for Nics {
    /// `dev` for one device; `a+b` for several.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<String> = self.0.iter().map(|(d, _)| d.to_string()).collect();
        f.write_str(&names.join("+"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(layout: &[usize], dev: usize) -> usize {
        layout.iter().filter(|&&d| d == dev).count()
    }

    #[test]
    fn one_device_carries_every_stripe() {
        assert_eq!(Nics::weighted([(3, 1)]).layout(4), [3, 3, 3, 3]);
        assert_eq!(Nics::weighted([(3, 1)]).first(), 3);
    }

    #[test]
    fn equal_speeds_interleave_in_member_order() {
        let n = Nics::weighted([(4, 100), (1, 100)]);
        assert_eq!(n.layout(4), [4, 1, 4, 1]);
        assert_eq!(n.layout(3), [4, 1, 4]);
        assert_eq!(n.first(), 4);
        assert_eq!(n.to_string(), "4+1");
    }

    #[test]
    fn stripes_follow_speed() {
        // 200 and 100 Gb/s: two thirds of the stripes on the faster NIC, interleaved.
        let n = Nics::weighted([(0, 200_000), (1, 100_000)]);
        let l = n.layout(6);
        assert_eq!((count(&l, 0), count(&l, 1)), (4, 2));
        assert_eq!(&l[..3], [0, 1, 0]);
        // Four NICs, one of them four times as fast: 8 stripes split 4-2-1-1... in proportion.
        let n = Nics::weighted([(0, 400), (1, 100), (2, 100), (3, 200)]);
        let l = n.layout(8);
        assert_eq!([0, 1, 2, 3].map(|d| count(&l, d)), [4, 1, 1, 2]);
        // Zero speed counts as the smallest weight rather than never.
        let l = Nics::weighted([(0, 0), (1, 0)]).layout(2);
        assert_eq!(l, [0, 1]);
    }

    #[test]
    fn fewer_stripes_than_members_use_the_fastest_first() {
        let n = Nics::weighted([(0, 100), (1, 300)]);
        assert_eq!(n.layout(1), [1]);
    }
}
