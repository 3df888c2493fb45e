//! Sizes and offsets of the ABI mirrors, checked against the x86_64/gcc layouts computed from
//! NCCL 2.30.7's headers (`src/include/plugin/net/net_v*.h`, `nccl_net.h` and the device-unpack
//! definitions in `src/include/net_device.h`).
#![cfg(test)]

use std::mem::{align_of, offset_of, size_of};

use super::*;

/// Offsets shared by every properties struct from v6 to v12.
macro_rules! assert_common_prop_head {
    ($t:ty) => {
        assert_eq!(offset_of!($t, name), 0);
        assert_eq!(offset_of!($t, pciPath), 8);
        assert_eq!(offset_of!($t, guid), 16);
        assert_eq!(offset_of!($t, ptrSupport), 24);
    };
}

#[test]
fn properties_v6_is_48_bytes_with_c_offsets() {
    type T = ncclNetProperties_v6_t;
    assert_eq!(size_of::<T>(), 48);
    assert_eq!(align_of::<T>(), 8);
    assert_common_prop_head!(T);
    assert_eq!(offset_of!(T, speed), 28);
    assert_eq!(offset_of!(T, port), 32);
    assert_eq!(offset_of!(T, latency), 36);
    assert_eq!(offset_of!(T, maxComms), 40);
    assert_eq!(offset_of!(T, maxRecvs), 44);
}

#[test]
fn properties_v5_is_the_v6_layout() {
    assert_eq!(size_of::<ncclNetProperties_v5_t>(), 48);
}

#[test]
fn properties_v7_is_56_bytes_with_device_type_at_48() {
    type T = ncclNetProperties_v7_t;
    assert_eq!(size_of::<T>(), 56);
    assert_common_prop_head!(T);
    assert_eq!(offset_of!(T, speed), 28);
    assert_eq!(offset_of!(T, maxRecvs), 44);
    assert_eq!(offset_of!(T, netDeviceType), 48);
    assert_eq!(offset_of!(T, netDeviceVersion), 52);
}

#[test]
fn properties_v8_is_64_bytes_with_reg_is_global_at_28() {
    type T = ncclNetProperties_v8_t;
    assert_eq!(size_of::<T>(), 64);
    assert_common_prop_head!(T);
    assert_eq!(offset_of!(T, regIsGlobal), 28);
    assert_eq!(offset_of!(T, speed), 32);
    assert_eq!(offset_of!(T, port), 36);
    assert_eq!(offset_of!(T, latency), 40);
    assert_eq!(offset_of!(T, maxComms), 44);
    assert_eq!(offset_of!(T, maxRecvs), 48);
    assert_eq!(offset_of!(T, netDeviceType), 52);
    assert_eq!(offset_of!(T, netDeviceVersion), 56);
}

#[test]
fn vdevice_props_v9_to_v11_are_20_bytes_and_v12_is_36() {
    assert_eq!(size_of::<ncclNetVDeviceProps_v9_t>(), 20);
    assert_eq!(size_of::<ncclNetVDeviceProps_v10_t>(), 20);
    assert_eq!(size_of::<ncclNetVDeviceProps_v11_t>(), 20);
    assert_eq!(size_of::<ncclNetVDeviceProps_v12_t>(), 36);
    assert_eq!(offset_of!(ncclNetVDeviceProps_v12_t, devs), 4);
}

#[test]
fn properties_v9_and_v10_are_104_bytes_with_vprops_at_64_and_max_bytes_at_88_96() {
    for (size, vprops, p2p, coll) in [
        (
            size_of::<ncclNetProperties_v9_t>(),
            offset_of!(ncclNetProperties_v9_t, vProps),
            offset_of!(ncclNetProperties_v9_t, maxP2pBytes),
            offset_of!(ncclNetProperties_v9_t, maxCollBytes),
        ),
        (
            size_of::<ncclNetProperties_v10_t>(),
            offset_of!(ncclNetProperties_v10_t, vProps),
            offset_of!(ncclNetProperties_v10_t, maxP2pBytes),
            offset_of!(ncclNetProperties_v10_t, maxCollBytes),
        ),
    ] {
        assert_eq!(size, 104);
        assert_eq!(vprops, 64);
        assert_eq!(p2p, 88);
        assert_eq!(coll, 96);
    }
    type T = ncclNetProperties_v9_t;
    assert_common_prop_head!(T);
    assert_eq!(offset_of!(T, regIsGlobal), 28);
    assert_eq!(offset_of!(T, forceFlush), 32);
    assert_eq!(offset_of!(T, netDeviceType), 56);
    assert_eq!(offset_of!(T, netDeviceVersion), 60);
}

#[test]
fn properties_v11_is_112_bytes_with_max_multi_request_size_at_104() {
    type T = ncclNetProperties_v11_t;
    assert_eq!(size_of::<T>(), 112);
    assert_common_prop_head!(T);
    assert_eq!(offset_of!(T, vProps), 64);
    assert_eq!(offset_of!(T, maxP2pBytes), 88);
    assert_eq!(offset_of!(T, maxCollBytes), 96);
    assert_eq!(offset_of!(T, maxMultiRequestSize), 104);
}

#[test]
fn properties_v12_is_128_bytes_with_every_c_offset() {
    type T = ncclNetProperties_v12_t;
    assert_eq!(size_of::<T>(), 128);
    assert_eq!(align_of::<T>(), 8);
    assert_eq!(offset_of!(T, name), 0);
    assert_eq!(offset_of!(T, pciPath), 8);
    assert_eq!(offset_of!(T, guid), 16);
    assert_eq!(offset_of!(T, ptrSupport), 24);
    assert_eq!(offset_of!(T, regIsGlobal), 28);
    assert_eq!(offset_of!(T, forceFlush), 32);
    assert_eq!(offset_of!(T, speed), 36);
    assert_eq!(offset_of!(T, port), 40);
    assert_eq!(offset_of!(T, latency), 44);
    assert_eq!(offset_of!(T, maxComms), 48);
    assert_eq!(offset_of!(T, maxRecvs), 52);
    assert_eq!(offset_of!(T, netDeviceType), 56);
    assert_eq!(offset_of!(T, netDeviceVersion), 60);
    assert_eq!(offset_of!(T, vProps), 64);
    assert_eq!(size_of::<ncclNetVDeviceProps_v12_t>(), 36);
    assert_eq!(offset_of!(T, maxP2pBytes), 104);
    assert_eq!(offset_of!(T, maxCollBytes), 112);
    assert_eq!(offset_of!(T, maxMultiRequestSize), 120);
    assert_eq!(offset_of!(T, railId), 124);
    assert_eq!(offset_of!(T, planeId), 126);
}

#[test]
fn device_handle_is_32_bytes_with_c_offsets() {
    type T = ncclNetDeviceHandle_v7_t;
    assert_eq!(size_of::<T>(), 32);
    assert_eq!(align_of::<T>(), 8);
    assert_eq!(offset_of!(T, netDeviceType), 0);
    assert_eq!(offset_of!(T, netDeviceVersion), 4);
    assert_eq!(offset_of!(T, handle), 8);
    assert_eq!(offset_of!(T, size), 16);
    assert_eq!(offset_of!(T, needsProxyProgress), 24);
    assert_eq!(size_of::<ncclNetDeviceHandle_v12_t>(), 32);
}

#[test]
fn comm_config_is_4_bytes() {
    assert_eq!(size_of::<ncclNetCommConfig_v10_t>(), 4);
    assert_eq!(size_of::<ncclNetCommConfig_v12_t>(), 4);
}

#[test]
fn net_attr_v12_is_44_bytes_with_op_algo_proto_after_the_comm_attrs() {
    type T = ncclNetAttr_v12_t;
    assert_eq!(size_of::<ncclNetCommAttr_v12_t>(), 16);
    assert_eq!(size_of::<T>(), 44);
    assert_eq!(align_of::<T>(), 4);
    assert_eq!(offset_of!(T, sendCommAttr), 0);
    assert_eq!(offset_of!(T, recvCommAttr), 16);
    assert_eq!(offset_of!(T, op), 32);
    assert_eq!(offset_of!(T, algo), 36);
    assert_eq!(offset_of!(T, proto), 40);
}

#[test]
fn net_table_sizes_match_c_v5_128_v6_136_v7_v8_152_v9_v10_160_v11_v12_176() {
    assert_eq!(size_of::<ncclNet_v5_t>(), 128);
    assert_eq!(size_of::<ncclNet_v6_t>(), 136);
    assert_eq!(size_of::<ncclNet_v7_t>(), 152);
    assert_eq!(size_of::<ncclNet_v8_t>(), 152);
    assert_eq!(size_of::<ncclNet_v9_t>(), 160);
    assert_eq!(size_of::<ncclNet_v10_t>(), 160);
    assert_eq!(size_of::<ncclNet_v11_t>(), 176);
    assert_eq!(size_of::<ncclNet_v12_t>(), 176);
}

#[test]
fn net_table_v5_slots_init_at_8_and_close_listen_last_at_120() {
    assert_eq!(offset_of!(ncclNet_v5_t, name), 0);
    assert_eq!(offset_of!(ncclNet_v5_t, init), 8);
    assert_eq!(offset_of!(ncclNet_v5_t, regMr), 56);
    assert_eq!(offset_of!(ncclNet_v5_t, deregMr), 64);
    assert_eq!(offset_of!(ncclNet_v5_t, closeListen), 120);
}

#[test]
fn net_table_v6_reg_mr_dma_buf_at_64_and_dereg_mr_at_72() {
    assert_eq!(offset_of!(ncclNet_v6_t, regMr), 56);
    assert_eq!(offset_of!(ncclNet_v6_t, regMrDmaBuf), 64);
    assert_eq!(offset_of!(ncclNet_v6_t, deregMr), 72);
    assert_eq!(offset_of!(ncclNet_v6_t, closeListen), 128);
}

#[test]
fn net_table_v7_v8_get_device_mr_at_136_and_irecv_consumed_at_144() {
    assert_eq!(offset_of!(ncclNet_v7_t, getDeviceMr), 136);
    assert_eq!(offset_of!(ncclNet_v7_t, irecvConsumed), 144);
    assert_eq!(offset_of!(ncclNet_v8_t, getDeviceMr), 136);
    assert_eq!(offset_of!(ncclNet_v8_t, irecvConsumed), 144);
}

#[test]
fn net_table_v9_v10_make_vdevice_at_152() {
    assert_eq!(offset_of!(ncclNet_v9_t, makeVDevice), 152);
    assert_eq!(offset_of!(ncclNet_v10_t, isend), 80);
    assert_eq!(offset_of!(ncclNet_v10_t, irecv), 88);
    assert_eq!(offset_of!(ncclNet_v10_t, makeVDevice), 152);
}

#[test]
fn net_table_v11_v12_finalize_at_160_and_set_net_attr_at_168() {
    assert_eq!(offset_of!(ncclNet_v11_t, makeVDevice), 152);
    assert_eq!(offset_of!(ncclNet_v11_t, finalize), 160);
    assert_eq!(offset_of!(ncclNet_v11_t, setNetAttr), 168);
    assert_eq!(offset_of!(ncclNet_v12_t, init), 8);
    assert_eq!(offset_of!(ncclNet_v12_t, makeVDevice), 152);
    assert_eq!(offset_of!(ncclNet_v12_t, finalize), 160);
    assert_eq!(offset_of!(ncclNet_v12_t, setNetAttr), 168);
}

#[test]
fn unpack_load_meta_is_16_bytes_16_aligned() {
    assert_eq!(size_of::<loadMeta>(), 16);
    assert_eq!(align_of::<loadMeta>(), 16);
    assert_eq!(offset_of!(loadMeta, src_off), 0);
    assert_eq!(offset_of!(loadMeta, len), 4);
    assert_eq!(offset_of!(loadMeta, dst_off), 8);
}

#[test]
fn unpack_constants_give_2048_pages_per_slot() {
    assert_eq!(NCCL_NET_DEVICE_UNPACK_MAX_QUEUE_DEPTH, 16);
    assert_eq!(NET_UNPACK_MAX_SLICE_SIZE, 4 << 20);
    assert_eq!(SLICE_PAGE_SIZE, 4096);
    assert_eq!(NET_UNPACK_MAX_SLICE_PAGES, 2048);
}

#[test]
fn unpack_net_unpack_meta_is_524416_bytes_with_cnt_at_524288() {
    assert_eq!(size_of::<netUnpackMeta>(), 524_416);
    assert_eq!(offset_of!(netUnpackMeta, mem), 0);
    assert_eq!(offset_of!(netUnpackMeta, cnt), 16 * 2048 * 16);
}

#[test]
fn unpack_device_handle_is_24_bytes() {
    type T = unpackNetDeviceHandle;
    assert_eq!(size_of::<T>(), 24);
    assert_eq!(offset_of!(T, meta), 0);
    assert_eq!(offset_of!(T, bounce_buf), 8);
    assert_eq!(offset_of!(T, head), 16);
}

#[test]
fn tuner_tables_are_the_c_layouts() {
    // name then one pointer per entry point (nccl_tuner.h of 2.19, 2.21, 2.23; tuner_v4.h ...
    // tuner_v6.h).
    assert_eq!(size_of::<ncclTuner_v1_t>(), 32);
    assert_eq!(offset_of!(ncclTuner_v1_t, init), 8);
    assert_eq!(offset_of!(ncclTuner_v1_t, getCollInfo), 16);
    assert_eq!(offset_of!(ncclTuner_v1_t, destroy), 24);
    assert_eq!(size_of::<ncclTuner_v2_t>(), 32);
    assert_eq!(offset_of!(ncclTuner_v2_t, getCollInfo), 16);
    assert_eq!(offset_of!(ncclTuner_v2_t, destroy), 24);
    assert_eq!(size_of::<ncclTuner_v3_t>(), 32);
    assert_eq!(offset_of!(ncclTuner_v3_t, getCollInfo), 16);
    assert_eq!(offset_of!(ncclTuner_v3_t, destroy), 24);
    assert_eq!(size_of::<ncclTuner_v4_t>(), 32);
    assert_eq!(offset_of!(ncclTuner_v4_t, getCollInfo), 16);
    assert_eq!(size_of::<ncclTuner_v5_t>(), 32);
    assert_eq!(offset_of!(ncclTuner_v5_t, finalize), 24);
    assert_eq!(size_of::<ncclTuner_v6_t>(), 40);
    assert_eq!(offset_of!(ncclTuner_v6_t, getChunkSize), 32);
}

#[test]
fn rma_v14_table_and_config_are_the_c_layouts() {
    // gcc on rma_v14.h (NCCL 2.30.7): name then 20 entry points.
    assert_eq!(size_of::<ncclRmaConfig_v14_t>(), 12);
    assert_eq!(offset_of!(ncclRmaConfig_v14_t, rankStride), 8);
    type T = ncclRma_v14_t;
    assert_eq!(size_of::<T>(), 168);
    assert_eq!(offset_of!(T, createContext), 48);
    assert_eq!(offset_of!(T, regMrSym), 56);
    assert_eq!(offset_of!(T, iput), 104);
    assert_eq!(offset_of!(T, iputSignal), 112);
    assert_eq!(offset_of!(T, iget), 120);
    assert_eq!(offset_of!(T, iflush), 128);
    assert_eq!(offset_of!(T, test), 136);
    assert_eq!(offset_of!(T, rmaProgress), 144);
    assert_eq!(offset_of!(T, queryLastError), 152);
    assert_eq!(offset_of!(T, finalize), 160);
}

#[test]
fn rma_v15_to_v17_tables_and_configs_are_the_c_layouts() {
    // NVIDIA/nccl's rma_v15.h-rma_v17.h: v15 has v14's 21 slots (optFlags changes arguments
    // only); v16 and v17 put getRmaProperties after devices.
    assert_eq!(size_of::<ncclRma_v15_t>(), 168);
    assert_eq!(offset_of!(ncclRma_v15_t, iput), 104);
    assert_eq!(offset_of!(ncclRma_v15_t, finalize), 160);
    for (size, get_rma, get_props, create, iput, finalize) in [
        (
            size_of::<ncclRma_v16_t>(),
            offset_of!(ncclRma_v16_t, getRmaProperties),
            offset_of!(ncclRma_v16_t, getProperties),
            offset_of!(ncclRma_v16_t, createContext),
            offset_of!(ncclRma_v16_t, iput),
            offset_of!(ncclRma_v16_t, finalize),
        ),
        (
            size_of::<ncclRma_v17_t>(),
            offset_of!(ncclRma_v17_t, getRmaProperties),
            offset_of!(ncclRma_v17_t, getProperties),
            offset_of!(ncclRma_v17_t, createContext),
            offset_of!(ncclRma_v17_t, iput),
            offset_of!(ncclRma_v17_t, finalize),
        ),
    ] {
        assert_eq!(
            (size, get_rma, get_props, create, iput, finalize),
            (176, 24, 32, 56, 112, 168)
        );
    }
    // int, int, int*, int: the pointer at 8, the count at 16, 24 bytes in all.
    assert_eq!(size_of::<ncclRmaConfig_v17_t>(), 24);
    assert_eq!(offset_of!(ncclRmaConfig_v17_t, peerArray), 8);
    assert_eq!(offset_of!(ncclRmaConfig_v17_t, peerArrayCount), 16);
    assert_eq!(size_of::<ncclRmaProperties_v16_t>(), 1);
}
