#!/usr/bin/env bash
# A real S3-compatible server on loopback for the test suite: Ceph's RADOS Gateway over a one-node
# Ceph cluster (one monitor, one OSD keeping objects in memory, cephx auth, no manager).
#
#   .ci/s3-radosgw.sh up DIR PORT [MON_PORT]   start; prints {"endpoint","accessKeyId","secretAccessKey","region"}
#   .ci/s3-radosgw.sh down DIR                 stop the daemons started in DIR and wait for them to exit
#
# DIR holds the configuration, keyrings, pid files and logs; `up` empties it first. Everything listens
# on 127.0.0.1 only. MON_PORT defaults to PORT + 1.
# Needs the Debian packages radosgw, ceph-mon and ceph-osd (`make test-deps` installs them).
# cephx stays on: radosgw refuses to start with auth "none". The OSD keeps deleted objects in memory
# until it stops, so memory grows with the bytes written; keep test objects small.
set -euo pipefail

READY_TIMEOUT_S=60   # each wait below gives up after this many seconds
MEMSTORE_BYTES=$((1024 * 1024 * 1024))   # 1 GiB cap for the in-memory object store
STOP_GRACE_TICKS=10  # 0.2 s each: a daemon still running 2 s after SIGTERM gets SIGKILL (its data is in memory anyway)

cmd=${1:?usage: s3-radosgw.sh up DIR PORT [MON_PORT] | down DIR}
dir=${2:?data directory required}

stop_all () {
  local pids=()
  for f in "$dir"/run/*.pid; do
    [ -f "$f" ] || continue
    pid=$(cat "$f")
    kill "$pid" 2>/dev/null && pids+=("$pid")
  done
  for pid in "${pids[@]}"; do
    for _ in $(seq 1 $STOP_GRACE_TICKS); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -9 "$pid" 2>/dev/null || true
  done
}

if [ "$cmd" = down ]; then
  [ -d "$dir/run" ] && stop_all
  exit 0
fi
[ "$cmd" = up ] || { echo "unknown command: $cmd" >&2; exit 2; }

port=${3:?port required}
mon_port=${4:-$((port + 1))}
for bin in ceph-mon ceph-osd radosgw radosgw-admin ceph ceph-authtool monmaptool; do
  command -v "$bin" >/dev/null || { echo "s3-radosgw: $bin not found; install radosgw ceph-mon ceph-osd (make test-deps)" >&2; exit 3; }
done

# On any failure, stop what was started and show the end of the logs.
trap 'rc=$?; if [ $rc -ne 0 ]; then tail -n 20 "$dir"/log/*.log >&2 2>/dev/null || true; stop_all; fi' EXIT

wait_for () { # wait_for DESCRIPTION COMMAND...
  local what=$1; shift
  local deadline=$((SECONDS + READY_TIMEOUT_S))
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -lt $deadline ] || { echo "s3-radosgw: timed out waiting for $what" >&2; return 1; }
    sleep 0.25
  done
}

rm -rf "$dir"
mkdir -p "$dir"/{mon,osd0,rgw,run,log}
fsid=$(cat /proc/sys/kernel/random/uuid)
conf="$dir/ceph.conf"
cat > "$conf" <<CONF
[global]
fsid = $fsid
mon host = v2:127.0.0.1:$mon_port
mon initial members = a
public network = 127.0.0.0/8
auth cluster required = cephx
auth service required = cephx
auth client required = cephx
auth allow insecure global id reclaim = true
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
mon allow pool size one = true
mon warn on pool no redundancy = false
osd crush chooseleaf type = 0
osd objectstore = memstore
memstore device bytes = $MEMSTORE_BYTES
run dir = $dir/run
admin socket = $dir/run/\$name.asok
log file = $dir/log/\$name.log
pid file = $dir/run/\$name.pid
keyring = $dir/keyring
[mon.a]
mon data = $dir/mon
[osd.0]
osd data = $dir/osd0
[client.rgw.a]
rgw frontends = beast endpoint=127.0.0.1:$port
rgw data = $dir/rgw
CONF
ceph_cli () { timeout 20 ceph -c "$conf" --connect-timeout 15 "$@"; }

ceph-authtool --create-keyring "$dir/keyring" --gen-key -n mon. --cap mon 'allow *' >/dev/null
ceph-authtool "$dir/keyring" --gen-key -n client.admin \
  --cap mon 'allow *' --cap osd 'allow *' --cap mgr 'allow *' --cap mds 'allow *' >/dev/null
monmaptool --create --addv a "[v2:127.0.0.1:$mon_port]" --fsid "$fsid" "$dir/monmap" >/dev/null
ceph-mon -c "$conf" --mkfs -i a --monmap "$dir/monmap" --keyring "$dir/keyring"
ceph-mon -c "$conf" -i a
wait_for "the monitor" ceph_cli mon stat

osd_uuid=$(cat /proc/sys/kernel/random/uuid)
ceph_cli osd new "$osd_uuid" >/dev/null
ceph_cli auth get-or-create osd.0 mon 'allow profile osd' osd 'allow *' mgr 'allow profile osd' >> "$dir/keyring"
ceph-osd -c "$conf" -i 0 --mkfs --osd-uuid "$osd_uuid" 2>/dev/null
ceph-osd -c "$conf" -i 0
osd_up () { ceph_cli osd stat -f json | grep -q '"num_up_osds":1'; }
wait_for "the OSD" osd_up

# radosgw creates the bucket data pools on the first object write. Parts uploaded while that creation
# is under way fail (ENOENT, HTTP 404); the retry of such a part then succeeds but its bytes are lost
# (a later GET fails inside that part). Real deployments have these pools; create them here up front.
for pool in default.rgw.buckets.data default.rgw.buckets.non-ec; do
  ceph_cli osd pool create "$pool" 8 8 >/dev/null
  ceph_cli osd pool application enable "$pool" rgw >/dev/null
done

ceph_cli auth get-or-create client.rgw.a mon 'allow rw' osd 'allow rwx' >> "$dir/keyring"
radosgw -c "$conf" -n client.rgw.a
wait_for "radosgw on port $port" curl -sf -o /dev/null "http://127.0.0.1:$port/"

access_key=ak$(head -c 8 /dev/urandom | od -An -tx1 | tr -d ' \n')
secret_key=sk$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
radosgw-admin -c "$conf" user create --uid=bwnet-test --display-name=bwnet-test \
  --access-key="$access_key" --secret="$secret_key" >/dev/null
printf '{"endpoint":"http://127.0.0.1:%s","accessKeyId":"%s","secretAccessKey":"%s","region":"us-east-1"}\n' \
  "$port" "$access_key" "$secret_key"
