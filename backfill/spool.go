package backfill

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/binary"
	"io"
	"math"
	"os"
)

// A series' history comes newest page first, while every sink needs each
// series whole and oldest first. The spool keeps the samples of one tuple
// as fixed-size records (series, time, value), page after page, in memory
// while they are few and in a temporary file past that, and replays one
// series at a time, oldest page first. Memory is thus bounded by one page
// of rows, whatever the length of the history.

// recordSize is the bytes of one sample: series index, Unix milliseconds,
// value bits.
const recordSize = 4 + 8 + 8

// spillAt is the size past which a tuple's spool moves to a file.
const spillAt = 4 << 20

type spool struct {
	dir   string // where a spilled spool's file goes
	limit int    // spillAt, unless set
	mem   bytes.Buffer
	file  *os.File // set once spilled
	w     *bufio.Writer
	size  int64
	pages []int64 // offset of each page's first record, newest page first
	rec   [recordSize]byte
}

// page starts a page: the samples added after it are older than those of
// the pages before.
func (s *spool) page() { s.pages = append(s.pages, s.size) }

// add appends one sample; samples of a page come oldest first.
func (s *spool) add(series int, ms int64, v float64) error {
	binary.LittleEndian.PutUint32(s.rec[0:], uint32(series))
	binary.LittleEndian.PutUint64(s.rec[4:], uint64(ms))
	binary.LittleEndian.PutUint64(s.rec[12:], math.Float64bits(v))
	s.limit = cmp.Or(s.limit, spillAt)
	if s.file == nil && s.mem.Len()+recordSize > s.limit {
		if err := s.spill(); err != nil {
			return err
		}
	}
	var err error
	if s.file != nil {
		_, err = s.w.Write(s.rec[:])
	} else {
		s.mem.Write(s.rec[:])
	}
	s.size += recordSize
	return err
}

func (s *spool) spill() error {
	f, err := os.CreateTemp(s.dir, "onchain-backfill-spool-*")
	if err != nil {
		return err
	}
	s.file, s.w = f, bufio.NewWriterSize(f, 256<<10)
	_, err = s.w.Write(s.mem.Bytes())
	s.mem = bytes.Buffer{}
	return err
}

// replay calls each for every sample of one series, oldest first.
func (s *spool) replay(series int, each func(ms int64, v float64) error) error {
	var src io.ReaderAt = bytes.NewReader(s.mem.Bytes())
	if s.file != nil {
		if err := s.w.Flush(); err != nil {
			return err
		}
		src = s.file
	}
	want := uint32(series)
	var rec [recordSize]byte
	for i := len(s.pages) - 1; i >= 0; i-- {
		end := s.size
		if i+1 < len(s.pages) {
			end = s.pages[i+1]
		}
		r := bufio.NewReaderSize(io.NewSectionReader(src, s.pages[i], end-s.pages[i]), 64<<10)
		for {
			if _, err := io.ReadFull(r, rec[:]); err == io.EOF {
				break
			} else if err != nil {
				return err
			}
			if binary.LittleEndian.Uint32(rec[0:]) != want {
				continue
			}
			ms := int64(binary.LittleEndian.Uint64(rec[4:]))
			v := math.Float64frombits(binary.LittleEndian.Uint64(rec[12:]))
			if err := each(ms, v); err != nil {
				return err
			}
		}
	}
	return nil
}

// close drops the spool and its file.
func (s *spool) close() {
	if s.file != nil {
		s.file.Close()
		os.Remove(s.file.Name())
		s.file = nil
	}
	s.mem = bytes.Buffer{}
}
