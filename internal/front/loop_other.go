//go:build !linux

package front

import "net"

// Elsewhere than on Linux, every fast-path connection has a goroutine.
type loopState struct{}

const loopsSupported = false

type loops struct{}

func (s *Server) startLoops(int) *loops                  { return nil }
func (ls *loops) accept(*Server, net.Conn) (*conn, bool) { return nil, false }
func (ls *loops) add(*conn)                              {}
func (ls *loops) drop(*conn)                             {}
func (ls *loops) wakeAll()                               {}
func defaultLoops() int                                  { return 0 }
