package dev.snowid;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A small strict JSON reader and compact writer (RFC 8259), for etcd's gateway, the stored values
 * and the driver protocol; the JDK has none.
 *
 * <p>Reading gives {@code Map<String,Object>} (in text order), {@code List<Object>}, {@code
 * String}, {@code Boolean}, {@code null}, and numbers: {@code Long} for an integer (no fraction, no
 * exponent) that fits, {@code BigInteger} for a larger one, {@code Double} for any other. Malformed
 * text, a duplicate member or trailing bytes throw {@link JsonException}.
 */
public final class Json {
  private Json() {}

  /** The text is not valid JSON. */
  public static final class JsonException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    JsonException(String message) {
      super(message);
    }
  }

  public static Object parse(String text) {
    Reader r = new Reader(text);
    r.ws();
    Object v = r.value(0);
    r.ws();
    if (r.pos != text.length()) {
      throw r.fail("trailing characters");
    }
    return v;
  }

  /** Compact JSON of maps, lists, strings, booleans, null and integral or floating numbers. */
  public static String write(Object value) {
    StringBuilder sb = new StringBuilder();
    write(sb, value);
    return sb.toString();
  }

  private static void write(StringBuilder sb, Object v) {
    if (v == null) {
      sb.append("null");
    } else if (v instanceof String s) {
      writeString(sb, s);
    } else if (v instanceof Boolean
        || v instanceof Long
        || v instanceof Integer
        || v instanceof BigInteger) {
      sb.append(v);
    } else if (v instanceof Double d) {
      if (d.isNaN() || d.isInfinite()) {
        throw new IllegalArgumentException("JSON has no " + d);
      }
      sb.append(d);
    } else if (v instanceof Map<?, ?> m) {
      sb.append('{');
      boolean first = true;
      for (Map.Entry<?, ?> e : m.entrySet()) {
        if (!first) {
          sb.append(',');
        }
        first = false;
        writeString(sb, (String) e.getKey());
        sb.append(':');
        write(sb, e.getValue());
      }
      sb.append('}');
    } else if (v instanceof List<?> l) {
      sb.append('[');
      for (int i = 0; i < l.size(); i++) {
        if (i > 0) {
          sb.append(',');
        }
        write(sb, l.get(i));
      }
      sb.append(']');
    } else {
      throw new IllegalArgumentException("cannot write " + v.getClass().getName() + " as JSON");
    }
  }

  private static final char[] HEX = "0123456789abcdef".toCharArray();

  private static void writeString(StringBuilder sb, String s) {
    sb.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> sb.append("\\\"");
        case '\\' -> sb.append("\\\\");
        case '\n' -> sb.append("\\n");
        case '\r' -> sb.append("\\r");
        case '\t' -> sb.append("\\t");
        case '\b' -> sb.append("\\b");
        case '\f' -> sb.append("\\f");
        default -> {
          if (c < 0x20) {
            sb.append("\\u00").append(HEX[c >> 4]).append(HEX[c & 15]);
          } else {
            sb.append(c);
          }
        }
      }
    }
    sb.append('"');
  }

  private static final class Reader {
    private static final int MAX_DEPTH = 64;
    final String s;
    int pos;

    Reader(String s) {
      this.s = s;
    }

    JsonException fail(String what) {
      return new JsonException("invalid JSON at offset " + pos + ": " + what);
    }

    void ws() {
      while (pos < s.length()) {
        char c = s.charAt(pos);
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
          pos++;
        } else {
          break;
        }
      }
    }

    Object value(int depth) {
      if (depth > MAX_DEPTH) {
        throw fail("nested too deeply");
      }
      if (pos >= s.length()) {
        throw fail("unexpected end");
      }
      char c = s.charAt(pos);
      switch (c) {
        case '{':
          return object(depth);
        case '[':
          return array(depth);
        case '"':
          return string();
        case 't':
          return word("true", Boolean.TRUE);
        case 'f':
          return word("false", Boolean.FALSE);
        case 'n':
          return word("null", null);
        default:
          if (c == '-' || (c >= '0' && c <= '9')) {
            return number();
          }
          throw fail("unexpected character");
      }
    }

    Object word(String w, Object v) {
      if (!s.startsWith(w, pos)) {
        throw fail("unexpected word");
      }
      pos += w.length();
      return v;
    }

    Map<String, Object> object(int depth) {
      pos++;
      Map<String, Object> m = new LinkedHashMap<>();
      ws();
      if (pos < s.length() && s.charAt(pos) == '}') {
        pos++;
        return m;
      }
      while (true) {
        ws();
        if (pos >= s.length() || s.charAt(pos) != '"') {
          throw fail("expected a member name");
        }
        String k = string();
        ws();
        expect(':');
        ws();
        Object v = value(depth + 1);
        if (m.containsKey(k)) {
          throw fail("duplicate member \"" + k + "\"");
        }
        m.put(k, v);
        ws();
        if (pos < s.length() && s.charAt(pos) == ',') {
          pos++;
          continue;
        }
        expect('}');
        return m;
      }
    }

    List<Object> array(int depth) {
      pos++;
      List<Object> l = new ArrayList<>();
      ws();
      if (pos < s.length() && s.charAt(pos) == ']') {
        pos++;
        return l;
      }
      while (true) {
        ws();
        l.add(value(depth + 1));
        ws();
        if (pos < s.length() && s.charAt(pos) == ',') {
          pos++;
          continue;
        }
        expect(']');
        return l;
      }
    }

    void expect(char c) {
      if (pos >= s.length() || s.charAt(pos) != c) {
        throw fail("expected '" + c + "'");
      }
      pos++;
    }

    String string() {
      pos++;
      StringBuilder sb = new StringBuilder();
      while (true) {
        if (pos >= s.length()) {
          throw fail("unterminated string");
        }
        char c = s.charAt(pos++);
        if (c == '"') {
          return sb.toString();
        }
        if (c < 0x20) {
          throw fail("control character in a string");
        }
        if (c != '\\') {
          sb.append(c);
          continue;
        }
        if (pos >= s.length()) {
          throw fail("unterminated escape");
        }
        char e = s.charAt(pos++);
        switch (e) {
          case '"' -> sb.append('"');
          case '\\' -> sb.append('\\');
          case '/' -> sb.append('/');
          case 'b' -> sb.append('\b');
          case 'f' -> sb.append('\f');
          case 'n' -> sb.append('\n');
          case 'r' -> sb.append('\r');
          case 't' -> sb.append('\t');
          case 'u' -> {
            if (pos + 4 > s.length()) {
              throw fail("short \\u escape");
            }
            int v = 0;
            for (int i = 0; i < 4; i++) {
              int d = Character.digit(s.charAt(pos++), 16);
              if (d < 0) {
                throw fail("bad \\u escape");
              }
              v = v * 16 + d;
            }
            sb.append((char) v);
          }
          default -> throw fail("bad escape");
        }
      }
    }

    Object number() {
      int start = pos;
      boolean integral = true;
      if (s.charAt(pos) == '-') {
        pos++;
      }
      if (pos >= s.length()) {
        throw fail("bad number");
      }
      if (s.charAt(pos) == '0') {
        pos++;
      } else if (s.charAt(pos) >= '1' && s.charAt(pos) <= '9') {
        while (pos < s.length() && s.charAt(pos) >= '0' && s.charAt(pos) <= '9') {
          pos++;
        }
      } else {
        throw fail("bad number");
      }
      if (pos < s.length() && s.charAt(pos) == '.') {
        integral = false;
        pos++;
        digits();
      }
      if (pos < s.length() && (s.charAt(pos) == 'e' || s.charAt(pos) == 'E')) {
        integral = false;
        pos++;
        if (pos < s.length() && (s.charAt(pos) == '+' || s.charAt(pos) == '-')) {
          pos++;
        }
        digits();
      }
      String t = s.substring(start, pos);
      if (!integral) {
        return Double.parseDouble(t);
      }
      BigInteger b = new BigInteger(t);
      return b.bitLength() < 64 ? (Object) b.longValue() : b;
    }

    void digits() {
      int start = pos;
      while (pos < s.length() && s.charAt(pos) >= '0' && s.charAt(pos) <= '9') {
        pos++;
      }
      if (pos == start) {
        throw fail("bad number");
      }
    }
  }
}
