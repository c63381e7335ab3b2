#!/bin/sh
# Runs a 4-host replay in network namespaces: hosts h0..h3 on a bridge (in its own namespace),
# HTB at 1 Gbit/s (RATE=100mbit: another rate) with a byte FIFO of FIFO bytes on every egress
# (hosts and bridge ports), static ARP, addresses only inside the namespaces. Every rank runs in its host's namespace
# with the launcher's variables set by hand (mpirun cannot place ranks in namespaces).
#   replay-netns.sh ROCESIM SCHEDULE SCENARIO OUT FIFO_BYTES [extra replay options]
# Exit: the status of rank 0 (77 when the namespaces cannot be made). Everything it creates is
# removed on exit, whatever happens. PROHIBIT_UDP_H1=PORT (or H0, H2, H3): that host's kernel
# refuses every UDP datagram it sends to PORT (a policy rule of type prohibit: sendmsg fails
# with EACCES), as a lab host's firewall would; its TCP control connection is not touched.
set -u
ROCESIM=$1 SCHED=$2 SCEN=$3 OUT=$4 FIFO=$5
RATE=${RATE:-1gbit}
shift 5
P=r12n$$
WORK=$(mktemp -d)
cleanup() {
    for i in 0 1 2 3; do
        [ -f "$WORK/pid$i" ] && kill -9 "$(cat "$WORK/pid$i")" 2>/dev/null
        ip netns del ${P}h$i 2>/dev/null
    done
    ip netns del ${P}b 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT INT TERM
ip netns add ${P}b || exit 77
ip -n ${P}b link add br0 type bridge || exit 77
ip -n ${P}b link set br0 up
: > "$WORK/map"
for i in 0 1 2 3; do
    ip netns add ${P}h$i || exit 77
    ip link add ${P}x$i netns ${P}h$i type veth peer name p$i netns ${P}b || exit 77
    ip -n ${P}h$i link set ${P}x$i name eth0
    ip -n ${P}h$i link set lo up
    ip -n ${P}h$i addr add 10.12.0.$((i + 1))/24 dev eth0
    # jumbo frames: a RoCE MTU of 4096 fits one datagram (no IP fragments)
    ip -n ${P}h$i link set eth0 mtu 9000
    ip -n ${P}b link set p$i mtu 9000
    # veth takes its NAPI path (the peer's one receive ring, in order) only with GRO on and
    # TSO off (the kernel's veth_skb_is_eligible_for_gro); otherwise a frame goes to the
    # backlog of whichever CPU sent it, and a rank that moves between the CPUs reorders its
    # own packets: measured, 3-34 NAKs and up to 1185 go-back-N retransmissions per 3x2 MB
    # incast without one drop. The simulated fabric never reorders. No socket asks for UDP
    # GRO, so datagrams are not merged.
    for pair in "${P}h$i eth0" "${P}b p$i"; do
        set -- $pair "$@"
        ip netns exec $1 ethtool -K $2 gro on tso off >/dev/null 2>&1 ||
            { echo "replay-netns: ethtool -K $2 gro on tso off failed (is ethtool installed?)"; exit 3; }
        shift 2
    done
    ip -n ${P}h$i link set eth0 up
    ip -n ${P}b link set p$i master br0
    ip -n ${P}b link set p$i up
    for pair in "${P}h$i eth0" "${P}b p$i"; do
        set -- $pair "$@"
        ns=$1 dev=$2
        shift 2
        ip netns exec $ns tc qdisc add dev $dev root handle 1: htb default 1 || exit 77
        # tc's default burst here is 1375 bytes, less than one 4154-byte frame: HTB then waits
        # for its timer before every frame and each late wake-up is lost rate (measured 0.91
        # Gbit/s). 32 KB lets it catch up; backlogged, it still averages exactly 1 Gbit/s.
        ip netns exec $ns tc class add dev $dev parent 1: classid 1:1 htb rate "$RATE" ceil "$RATE" \
            burst 32k cburst 32k || exit 77
        ip netns exec $ns tc qdisc add dev $dev parent 1:1 handle 10: bfifo limit "$FIFO" || exit 77
    done
    echo "host $i ${P}h$i - eth0 10.12.0.$((i + 1)) 0" >> "$WORK/map"
done
# static ARP: every host knows every other host's MAC
for i in 0 1 2 3; do
    mac=$(ip -n ${P}h$i -o link show eth0 | sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p')
    for j in 0 1 2 3; do
        [ $i = $j ] || ip -n ${P}h$j neigh add 10.12.0.$((i + 1)) lladdr "$mac" dev eth0 nud permanent
    done
done
for i in 0 1 2 3; do
    eval "port=\${PROHIBIT_UDP_H$i:-}"
    if [ -n "$port" ]; then
        ip -n ${P}h$i rule add ipproto udp dport "$port" prohibit || exit 77
    fi
done
PRIO="nice -n -10"
chrt -f 1 true 2>/dev/null && PRIO="chrt -f 1"
for i in 3 2 1 0; do
    # ranks share the CPUs with everything else (builds, fuzzers): a real-time priority keeps
    # their wake-ups on time (the kernel's RT throttling still leaves 5% to the rest, and
    # the ranks sleep between paced packets); nice -10 where chrt is refused
    ip netns exec ${P}h$i $PRIO env OMPI_COMM_WORLD_RANK=$i OMPI_COMM_WORLD_SIZE=4 \
        timeout -k 5 90 "$ROCESIM" replay "$SCHED" --hosts "$WORK/map" --scenario "$SCEN" -o "$OUT" "$@" \
        > "$WORK/out$i" 2>&1 &
    echo $! > "$WORK/pid$i"
done
rc=0
for i in 3 2 1; do wait "$(cat "$WORK/pid$i")"; done
wait "$(cat "$WORK/pid0")" || rc=$?
cat "$WORK/out0" "$WORK/out1" "$WORK/out2" "$WORK/out3"
# what every egress qdisc sent and dropped (the incast queue builds at the bridge port p0;
# senders' own bursts can overflow their FIFOs too)
for i in 0 1 2 3; do
    for pair in "${P}b p$i bridge" "${P}h$i eth0 host$i"; do
        set -- $pair
        ip netns exec $1 tc -s qdisc show dev $2 | sed -n "s/^ Sent \([0-9]*\) bytes.*dropped \([0-9]*\),.*/egress $3 $2 sent \1 dropped \2/p" | head -1
    done
done
# datagrams a host's kernel dropped (a full socket buffer, a checksum): losses no qdisc saw
for i in 0 1 2 3; do
    echo "udp host$i $(ip netns exec ${P}h$i nstat -az UdpRcvbufErrors UdpSndbufErrors UdpInErrors 2>/dev/null | awk '/^Udp/ {printf "%s %s ", $1, $2}')"
done
exit $rc
