#!/usr/bin/env bash
# A one-node Slurm on this machine for the runner's cluster tests (tests/runner/test_cluster_*.py).
#   bash .ci/slurm.sh start   install slurm-wlm and munge (apt) if absent, write a one-node slurm.conf, start munged,
#                             slurmctld and slurmd (directly: no systemd), wait until `sinfo` shows the node idle
#   bash .ci/slurm.sh stop    stop the daemons this script started (by the pids in their pid files)
# Runs as root (SlurmUser=root). Debian's slurm-wlm 22.05: ProctrackType=proctrack/linuxproc and TaskPlugin=task/none
# need no cgroups, so it runs in a container.
set -euo pipefail

CONF=/etc/slurm/slurm.conf
STATE=/var/spool/slurmctld
SPOOL=/var/spool/slurmd
LOGS=/var/log/slurm
CTLD_PID=/run/slurmctld.pid
SLURMD_PID=/run/slurmd.pid
MUNGE_PID=/run/munge/munged.pid
# The pid files of the daemons this script started (a munged already running is left alone).
STARTED=/run/openrecipes-slurm.started

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

install() {
  if command -v sbatch >/dev/null 2>&1 && command -v slurmctld >/dev/null 2>&1 && command -v munged >/dev/null 2>&1; then
    return
  fi
  export DEBIAN_FRONTEND=noninteractive
  as_root apt-get update -qq
  as_root apt-get install -y -qq slurm-wlm munge >/dev/null
}

write_conf() {
  local host cpus
  host=$(hostname -s)
  cpus=$(nproc)
  as_root mkdir -p /etc/slurm "$STATE" "$SPOOL" "$LOGS" /run/munge
  as_root tee "$CONF" >/dev/null <<EOF
# Written by .ci/slurm.sh: one node, this machine, for tests.
ClusterName=openrecipes
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation=$STATE
SlurmdSpoolDir=$SPOOL
SlurmctldPidFile=$CTLD_PID
SlurmdPidFile=$SLURMD_PID
SlurmctldLogFile=$LOGS/slurmctld.log
SlurmdLogFile=$LOGS/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
GresTypes=gpu
ReturnToService=2
MinJobAge=600
SlurmdTimeout=60
NodeName=$host CPUs=$cpus Gres=gpu:8 State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
EOF
  # Eight stand-in GPUs (empty files; task/none constrains no devices): the runner's jobs ask for --gpus-per-node
  # as on a GPU cluster; what the GPUs are is the per-node preflight's to check (OPENRECIPES_GPUS in the tests).
  as_root mkdir -p /run/openrecipes-gpus
  for i in 0 1 2 3 4 5 6 7; do as_root touch "/run/openrecipes-gpus/gpu$i"; done
  as_root tee /etc/slurm/gres.conf >/dev/null <<EOF
Name=gpu File=/run/openrecipes-gpus/gpu[0-7]
EOF
}

alive() {  # alive PIDFILE: the pid in it names a running process
  [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null
}

start() {
  install
  write_conf
  : | as_root tee "$STARTED" >/dev/null
  if [ ! -s /etc/munge/munge.key ]; then
    as_root mungekey --create --keyfile /etc/munge/munge.key 2>/dev/null \
      || as_root dd if=/dev/urandom of=/etc/munge/munge.key bs=1 count=1024 status=none
  fi
  as_root chown munge:munge /etc/munge/munge.key /run/munge 2>/dev/null || true
  as_root chmod 0400 /etc/munge/munge.key
  if ! alive "$MUNGE_PID"; then
    as_root munged --force
    echo "$MUNGE_PID" | as_root tee -a "$STARTED" >/dev/null
  fi
  if ! alive "$CTLD_PID"; then
    as_root slurmctld -i  # -i: ignore state left by an earlier run
    echo "$CTLD_PID" | as_root tee -a "$STARTED" >/dev/null
  fi
  if ! alive "$SLURMD_PID"; then
    as_root slurmd
    echo "$SLURMD_PID" | as_root tee -a "$STARTED" >/dev/null
  fi
  local host state
  host=$(hostname -s)
  for _ in $(seq 1 60); do
    state=$(sinfo -h -n "$host" -o %T 2>/dev/null || true)
    if [ "$state" = idle ]; then
      echo "slurm: node $host idle ($(sinfo -V))"
      return 0
    fi
    case "$state" in  # drained by an earlier configuration (the controller keeps node states): take it back
      drained|drain*|inval) as_root scontrol update nodename="$host" state=resume 2>/dev/null || true ;;
    esac
    sleep 1
  done
  echo "slurm: node $host not idle after 60 s (state: ${state:-none}); logs in $LOGS" >&2
  tail -n 20 "$LOGS/slurmctld.log" "$LOGS/slurmd.log" >&2 || true
  return 1
}

stop() {
  [ -f "$STARTED" ] || return 0
  # Newest first: slurmd, slurmctld, then munged.
  tac "$STARTED" | while read -r pidfile; do
    if alive "$pidfile"; then
      as_root kill "$(cat "$pidfile")" || true
      for _ in $(seq 1 30); do  # slurmctld saves its state before it exits
        alive "$pidfile" || break
        sleep 0.5
      done
    fi
  done
  as_root rm -f "$STARTED"
  echo "slurm: daemons stopped"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
