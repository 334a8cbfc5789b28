package dev.snowid;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.OptionalLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The fence file {@code snowid-fence 1 <unix_ms>\n}, replaced durably: write {@code <path>.tmp},
 * fsync it, rename it over the file, fsync the directory.
 */
public final class FileFenceStore implements FenceStore {
  private static final Pattern FENCE = Pattern.compile("snowid-fence 1 ([0-9]{1,18})\n");

  private final Path file;

  public FileFenceStore(Path file) {
    this.file = file;
  }

  public Path file() {
    return file;
  }

  /** The fence a fence file's bytes hold; DATA_LOSS for anything but the exact format. */
  public static long parse(byte[] bytes) {
    String text = new String(bytes, StandardCharsets.ISO_8859_1);
    Matcher m = FENCE.matcher(text);
    if (m.matches()) {
      long ms = Long.parseLong(m.group(1));
      if (ms <= Layout.MAX_UNIX_MS) {
        return ms;
      }
    }
    String shown = text.length() > 60 ? text.substring(0, 60) : text;
    throw SnowidException.dataLoss("not a fence file: " + Json.write(shown));
  }

  /** The text stored for a fence; INVALID_ARGUMENT outside 0 to {@link Layout#MAX_UNIX_MS}. */
  public static String format(long unixMs) {
    if (unixMs < 0 || unixMs > Layout.MAX_UNIX_MS) {
      throw SnowidException.invalid("a fence is 0 to " + Layout.MAX_UNIX_MS + " ms, not " + unixMs);
    }
    return "snowid-fence 1 " + unixMs + "\n";
  }

  @Override
  public OptionalLong load() {
    byte[] bytes;
    try {
      bytes = Files.readAllBytes(file);
    } catch (NoSuchFileException e) {
      return OptionalLong.empty();
    } catch (IOException e) {
      throw new SnowidException(
          Code.UNAVAILABLE, "cannot read the fence file " + file + ": " + e, 1, e);
    }
    try {
      return OptionalLong.of(parse(bytes));
    } catch (SnowidException e) {
      throw new SnowidException(Code.DATA_LOSS, file + ": " + e.getMessage(), 0, e);
    }
  }

  /** A fence that cannot be written is refused before any file is touched. */
  @Override
  public void store(long unixMs) {
    byte[] text = format(unixMs).getBytes(StandardCharsets.US_ASCII);
    Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
    try {
      try (FileChannel ch =
          FileChannel.open(
              tmp,
              StandardOpenOption.WRITE,
              StandardOpenOption.CREATE,
              StandardOpenOption.TRUNCATE_EXISTING)) {
        ByteBuffer b = ByteBuffer.wrap(text);
        while (b.hasRemaining()) {
          ch.write(b);
        }
        ch.force(true);
      }
      try {
        Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      } catch (AtomicMoveNotSupportedException e) {
        Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
      }
      Path dir = file.toAbsolutePath().getParent();
      try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
        d.force(true);
      }
    } catch (IOException e) {
      throw new SnowidException(
          Code.UNAVAILABLE, "cannot store the fence file " + file + ": " + e, 1, e);
    }
  }
}
