package queen

import "unicode/utf8"

// Ack bodies are written by hand: encoding/json's reflection cost more than the rest of an
// ack's encoding. The bytes are exactly what json.Marshal writes for ackBody and ackBatchBody.

// appendAckBatch writes body as json.Marshal would.
func appendAckBatch(b []byte, body *ackBatchBody) []byte {
	if body.Acks == nil {
		b = append(b, `{"acknowledgments":null`...)
	} else {
		b = appendAcks(b, body.Acks)
	}
	if body.ConsumerGroup != "" {
		b = append(b, `,"consumerGroup":`...)
		b = appendJSONString(b, body.ConsumerGroup)
	}
	return append(b, '}')
}

func appendAcks(b []byte, acks []ackBody) []byte {
	b = append(b, `{"acknowledgments":[`...)
	for i := range acks {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendAck(b, &acks[i])
	}
	return append(b, ']')
}

// appendAck writes a as json.Marshal would.
func appendAck(b []byte, a *ackBody) []byte {
	b = append(b, `{"transactionId":`...)
	b = appendJSONString(b, a.TransactionID)
	b = append(b, `,"partitionId":`...)
	b = appendJSONString(b, a.PartitionID)
	if a.LeaseID != "" {
		b = append(b, `,"leaseId":`...)
		b = appendJSONString(b, a.LeaseID)
	}
	b = append(b, `,"status":`...)
	b = appendJSONString(b, string(a.Status))
	if a.ConsumerGroup != "" {
		b = append(b, `,"consumerGroup":`...)
		b = appendJSONString(b, a.ConsumerGroup)
	}
	if a.Error != "" {
		b = append(b, `,"error":`...)
		b = appendJSONString(b, a.Error)
	}
	return append(b, '}')
}

const lowerHex = "0123456789abcdef"

// appendJSONString writes s quoted as json.Marshal does: control characters, quote and
// backslash escaped, and also <, > and & (HTML-safe), U+2028 and U+2029; invalid UTF-8
// becomes U+FFFD.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	done := 0 // s[:done] is written
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[done:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', lowerHex[c>>4], lowerHex[c&0xF])
			}
			i++
			done = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[done:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[done:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', lowerHex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		done = i
	}
	b = append(b, s[done:]...)
	return append(b, '"')
}
