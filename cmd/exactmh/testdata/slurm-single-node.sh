#!/usr/bin/env bash
# Starts or stops a single-node Slurm cluster for TestSlurmReal
# (slurm_test.go): munged, slurmctld and slurmd of Debian's munge,
# slurmctld, slurmd and slurm-client, run as root, with every file in DIR.
#
#   slurm-single-node.sh start DIR CTLD_PORT SLURMD_PORT   # prints SLURM_CONF's path
#   slurm-single-node.sh stop DIR
#
# The node is this host (hostname -s) with its cores; no cgroups, no
# accounting: proctrack/linuxproc, task/none.
set -euo pipefail
mode=$1
dir=$2
case "$mode" in
start)
	ctld=$3
	slurmd=$4
	host=$(hostname -s)
	cpus=$(nproc)
	mkdir -p "$dir/state" "$dir/spool"
	key=/etc/munge/munge.key
	if [ ! -s "$key" ]; then
		key=$dir/munge.key
		head -c 1024 /dev/urandom > "$key"
		chmod 600 "$key"
	fi
	munged --socket="$dir/munge.sock" --pid-file="$dir/munged.pid" --log-file="$dir/munged.log" \
		--seed-file="$dir/munge.seed" --key-file="$key" --force
	cat > "$dir/slurm.conf" <<CONF
ClusterName=exactmhtest
SlurmctldHost=$host
SlurmUser=root
SlurmctldPort=$ctld
SlurmdPort=$slurmd
AuthType=auth/munge
AuthInfo=socket=$dir/munge.sock
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
NodeName=$host CPUs=$cpus RealMemory=8000 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
	export SLURM_CONF=$dir/slurm.conf
	slurmctld -f "$SLURM_CONF"
	slurmd -f "$SLURM_CONF"
	for _ in $(seq 60); do
		if sinfo -h -o %t 2>/dev/null | grep -qx idle; then
			echo "$SLURM_CONF"
			exit 0
		fi
		sleep 1
	done
	echo "the node did not come up idle within 60 s: $(sinfo 2>&1)" >&2
	exit 1
	;;
stop)
	for p in slurmd slurmctld munged; do
		if [ -s "$dir/$p.pid" ]; then
			kill "$(cat "$dir/$p.pid")" 2>/dev/null || true
		fi
	done
	;;
*)
	echo "usage: $0 start DIR CTLD_PORT SLURMD_PORT | stop DIR" >&2
	exit 2
	;;
esac
