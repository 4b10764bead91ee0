package netlab

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// pidsIn lists the processes whose network namespace is the one at path,
// as `ip netns pids` does: by the namespace file's device and inode. A
// process that has ended (a zombie) has no namespace and is not listed.
// This process is left out: while Listen or Dial makes a socket in a lab,
// one of its threads is there, and /proc/PID/ns/net shows the main
// thread's namespace.
func pidsIn(path string) ([]int, error) {
	ns, err := nsID(path)
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		if id, err := nsID(fmt.Sprintf("/proc/%d/ns/net", pid)); err == nil && id == ns {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// nsID identifies the namespace a namespace file (or /proc/PID/ns/net)
// refers to.
func nsID(path string) ([2]uint64, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return [2]uint64{}, err
	}
	st := fi.Sys().(*syscall.Stat_t)
	return [2]uint64{uint64(st.Dev), st.Ino}, nil
}

// groupRunning lists the processes of group pgid that have not ended.
func groupRunning(pgid int) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		// "pid (comm) state ppid pgrp …"; comm may hold spaces and ")".
		i := strings.LastIndexByte(string(data), ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(data[i+1:]))
		if len(f) < 3 || f[0] == "Z" || f[0] == "X" {
			continue
		}
		if g, err := strconv.Atoi(f[2]); err == nil && g == pgid {
			pids = append(pids, pid)
		}
	}
	return pids
}

// listening reports whether process pid, inside the namespace at nsPath,
// has a TCP socket listening on ap in that namespace, read from
// /proc/PID/net/tcp (or tcp6), which shows the process's namespace. The
// namespace is checked first: until nsenter has entered it, the file
// would show the root namespace's sockets.
func listening(pid int, nsPath string, ap netip.AddrPort) bool {
	want, err := nsID(nsPath)
	if err != nil {
		return false
	}
	if id, err := nsID(fmt.Sprintf("/proc/%d/ns/net", pid)); err != nil || id != want {
		return false
	}
	file := "tcp"
	if ap.Addr().Is6() {
		file = "tcp6"
	}
	f, err := os.Open(fmt.Sprintf("/proc/%d/net/%s", pid, file))
	if err != nil {
		return false
	}
	defer f.Close()
	local := procAddr(ap)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// "sl local_address rem_address st …"; 0A is LISTEN.
		if fields := strings.Fields(sc.Text()); len(fields) > 3 && fields[1] == local && fields[3] == "0A" {
			return true
		}
	}
	return false
}

// procAddr writes ap as /proc/net/tcp does: the address as 32-bit words
// in the machine's byte order, in hex, then the port.
func procAddr(ap netip.AddrPort) string {
	b := ap.Addr().AsSlice()
	var s strings.Builder
	for i := 0; i+4 <= len(b); i += 4 {
		fmt.Fprintf(&s, "%08X", binary.NativeEndian.Uint32(b[i:]))
	}
	fmt.Fprintf(&s, ":%04X", ap.Port())
	return s.String()
}
